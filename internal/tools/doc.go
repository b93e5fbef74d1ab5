// Package tools holds ibkey's development-only code; none of it is part of the shipped
// binary (they are commands that make and scripts/ run; nothing imports them):
//
//   - mkhost: writes the fixture sysfs trees and the demo host (`make fixtures`) and the
//     large benchmark hosts (scripts/bench).
//   - fattree: writes a two-level fat-tree topology for ibsim (scripts/bench-sweep).
//   - partconfgen: writes a large valid partitions.conf for benchmarks (scripts/bench).
package tools
