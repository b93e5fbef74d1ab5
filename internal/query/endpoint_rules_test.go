package query

import (
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestPortRulesLocal: with PortRules, a local port that is DOWN answers not-active
// (issue: can-talk said yes, exit 0); without, the verdict is what it was.
func TestPortRulesLocal(t *testing.T) {
	calls := 0
	for _, tc := range []struct {
		rules bool
		want  check.VerdictKind
	}{{false, check.VerdictYes}, {true, check.VerdictNotActive}} {
		eps, err := ResolveEndpointsFrom(EndpointSources{Host: fixtureHost(&calls), PortRules: tc.rules}, specs(t, "mlx5_0/1", "mlx5_1/2")...)
		if err != nil {
			t.Fatal(err)
		}
		if eps[1].Endpoint.State != "" != tc.rules {
			t.Errorf("rules %v: state %q", tc.rules, eps[1].Endpoint.State)
		}
		v := check.CanTalk(eps[0].Endpoint, eps[1].Endpoint)
		if v.Kind != tc.want {
			t.Errorf("rules %v: %s %v", tc.rules, v.Kind, v.Reasons)
		}
		if tc.rules && (eps[0].Endpoint.Subnet == nil || eps[0].Endpoint.Subnet.GIDPrefix == 0) {
			t.Errorf("mlx5_0/1 subnet %+v", eps[0].Endpoint.Subnet)
		}
	}
}
