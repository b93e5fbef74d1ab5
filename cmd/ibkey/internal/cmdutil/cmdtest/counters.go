package cmdtest

import (
	"encoding/json"
	"strings"
	"testing"
)

// CountersSample is one line of `ibkey watch counters -o json`.
type CountersSample struct {
	Time     string   `json:"sampled_at"`
	Interval *float64 `json:"interval_s"`
	Ports    []struct {
		Device   string `json:"device"`
		Port     int    `json:"port"`
		Address  string `json:"address"`
		State    string `json:"state"`
		Error    string `json:"error"`
		Counters map[string]struct {
			Value       *uint64  `json:"value"`
			Delta       *uint64  `json:"delta"`
			Rate        *float64 `json:"rate"`
			Source      string   `json:"source"`
			Saturated   bool     `json:"saturated"`
			Reset       bool     `json:"reset"`
			Error       string   `json:"error"`
			Unavailable string   `json:"unavailable"`
		} `json:"counters"`
	} `json:"ports"`
}

// DecodeCounters reads `watch counters -o json` output: one sample a line; anything
// else fails the test.
func DecodeCounters(t testing.TB, out string) []CountersSample {
	t.Helper()
	var samples []CountersSample
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var s CountersSample
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("not one JSON object per line: %v\n%s", err, out)
		}
		samples = append(samples, s)
	}
	return samples
}
