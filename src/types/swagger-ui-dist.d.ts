declare module "swagger-ui-dist" {
  /** Folder holding the Swagger UI assets shipped in the package. */
  export function getAbsoluteFSPath(): string;
}
