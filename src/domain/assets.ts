export interface Asset {
  id: string;
  code: string;
  scale: number;
  settlement: { kind: "erc20"; chainId: number; tokenAddress: string } | { kind: "native"; chainId: number } | { kind: "offchain" };
  createdAt: Date;
}
