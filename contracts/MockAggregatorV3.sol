// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A Chainlink AggregatorV3Interface for tests: the owner sets each round (answer and updatedAt), so tests
/// can show fresh, stale, non-positive and incomplete rounds to the rate engine (lib/rates/sources.ts).
contract MockAggregatorV3 {
    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 4;
    address private immutable owner;

    uint80 private roundId;
    int256 private answer;
    uint256 private startedAt;
    uint256 private updatedAt;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    constructor(uint8 decimals_, string memory description_) {
        decimals = decimals_;
        description = description_;
        owner = msg.sender;
    }

    /// A new round; updatedAt_ 0 leaves the round incomplete.
    function setRound(int256 answer_, uint256 updatedAt_) external {
        require(msg.sender == owner, "only owner");
        roundId += 1;
        answer = answer_;
        startedAt = updatedAt_;
        updatedAt = updatedAt_;
        emit AnswerUpdated(answer_, roundId, updatedAt_);
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return (roundId, answer, startedAt, updatedAt, roundId);
    }

    function getRoundData(uint80 id) external view returns (uint80, int256, uint256, uint256, uint80) {
        require(id == roundId, "No data present");
        return (roundId, answer, startedAt, updatedAt, roundId);
    }
}
