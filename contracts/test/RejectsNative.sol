// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice A recipient that refuses the native token (tests a bad item inside a native batch).
contract RejectsNative {
    receive() external payable {
        revert("no thanks");
    }
}
