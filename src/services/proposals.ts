/** Proposals (four eyes for manual money): the use cases are in ./proposals/, one file each. */
export * from "./proposals/index.js";
