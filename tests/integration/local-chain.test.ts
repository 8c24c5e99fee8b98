import { createServer, type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { startLocalChain } from "../../scripts/anvil-chain.js";

describe("the local chain (anvil)", () => {
  it("on a port already in use, says so and what to change instead of 'exited with 1'", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      await expect(startLocalChain({ port })).rejects.toThrow(`anvil could not start: port ${port} on 127.0.0.1 is already in use`);
    } finally {
      holder.close();
    }
  });
});
