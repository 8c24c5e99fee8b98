/**
 * `npm run --silent sign-message -- new` prints a fresh private key and its address;
 * `npm run --silent sign-message -- sign` signs the message read from stdin (EIP-191) with the key in
 * $OPERATOR_KEY and prints the signature. A stand-in for an operator's wallet when trying the
 * payout-address proof by hand.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const [command] = process.argv.slice(2);
if (command === "new") {
  const key = generatePrivateKey();
  console.log(`${key} ${privateKeyToAccount(key).address}`);
} else if (command === "sign") {
  const key = process.env.OPERATOR_KEY;
  if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
    console.error("set OPERATOR_KEY to the operator's private key (0x + 64 hex)");
    process.exit(1);
  }
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const message = Buffer.concat(chunks).toString("utf8").replace(/\n$/, "");
  console.log(await privateKeyToAccount(key as `0x${string}`).signMessage({ message }));
} else {
  console.error("usage: sign-message new | sign (message on stdin, key in $OPERATOR_KEY)");
  process.exit(2);
}
