// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title PayoutVault
/// @notice The treasury of one chain: holds the funds that operators are paid from, and pays many
/// payouts in one transaction, emitting one `Paid` event per payout id. Only the owner (the
/// service's signer) can pay. A batch is all-or-nothing: if one payment fails the whole
/// transaction reverts with `PaymentFailed(index)`, which names the item so the service can leave
/// it out and pay the rest.
contract PayoutVault {
    /// @param payoutId the ledger's payout id (a uuid, left-aligned in 32 bytes)
    /// @param token the ERC-20 token paid, or the zero address for the native token
    event Paid(bytes32 indexed payoutId, address indexed token, address indexed recipient, uint256 amount);

    error NotOwner();
    error LengthMismatch();
    error PaymentFailed(uint256 index);
    error NotAToken();

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// @notice Funds in the native token are received from anyone.
    receive() external payable {}

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    function payNative(bytes32[] calldata ids, address[] calldata recipients, uint256[] calldata amounts) external onlyOwner {
        uint256 n = ids.length;
        if (recipients.length != n || amounts.length != n) revert LengthMismatch();
        for (uint256 i = 0; i < n; i++) {
            (bool ok, ) = recipients[i].call{value: amounts[i]}("");
            if (!ok) revert PaymentFailed(i);
            emit Paid(ids[i], address(0), recipients[i], amounts[i]);
        }
    }

    function payToken(address token, bytes32[] calldata ids, address[] calldata recipients, uint256[] calldata amounts) external onlyOwner {
        uint256 n = ids.length;
        if (recipients.length != n || amounts.length != n) revert LengthMismatch();
        if (token.code.length == 0) revert NotAToken();
        for (uint256 i = 0; i < n; i++) {
            // transfer(address,uint256); tokens that return nothing are accepted, `false` is a failure.
            (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(0xa9059cbb, recipients[i], amounts[i]));
            if (!ok || (ret.length != 0 && !abi.decode(ret, (bool)))) revert PaymentFailed(i);
            emit Paid(ids[i], token, recipients[i], amounts[i]);
        }
    }
}
