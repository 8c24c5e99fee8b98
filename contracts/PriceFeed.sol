// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title PriceFeed
/// @notice A price feed with Chainlink's AggregatorV3Interface, for tests and the demo: one whole
/// base unit is worth `answer / 10^decimals` whole quote units. Its owner (the deployer) starts each
/// round with `update`, and can make the reads revert with `FeedBroken()` to try a failing feed.
contract PriceFeed {
    struct Round {
        int256 answer;
        uint256 startedAt;
        uint256 updatedAt;
        uint80 answeredInRound;
    }

    /// @notice Chainlink's AggregatorInterface event for a new answer.
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    error NotOwner();
    error FeedBroken();
    error NoDataPresent(uint80 roundId);

    address public immutable owner;
    uint8 public immutable decimals;
    uint256 public constant version = 1;
    string public description;
    bool public broken;
    uint80 public latestRound;
    mapping(uint80 => Round) private rounds;

    constructor(uint8 decimals_, string memory description_, int256 initialAnswer) {
        owner = msg.sender;
        decimals = decimals_;
        description = description_;
        _start(initialAnswer, block.timestamp);
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    /// @notice Starts a new round answering `answer`, updated at `updatedAt` (0: this block's time).
    function update(int256 answer, uint256 updatedAt) external onlyOwner {
        _start(answer, updatedAt == 0 ? block.timestamp : updatedAt);
    }

    /// @notice While broken, `latestRoundData` and `getRoundData` revert with `FeedBroken()`.
    function setBroken(bool broken_) external onlyOwner {
        broken = broken_;
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return _round(latestRound);
    }

    function getRoundData(uint80 roundId_)
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return _round(roundId_);
    }

    function _start(int256 answer, uint256 at) private {
        uint80 id = latestRound + 1;
        latestRound = id;
        rounds[id] = Round({answer: answer, startedAt: at, updatedAt: at, answeredInRound: id});
        emit AnswerUpdated(answer, id, at);
    }

    function _round(uint80 id) private view returns (uint80, int256, uint256, uint256, uint80) {
        if (broken) revert FeedBroken();
        Round storage r = rounds[id];
        if (r.answeredInRound == 0) revert NoDataPresent(id);
        return (id, r.answer, r.startedAt, r.updatedAt, r.answeredInRound);
    }
}
