package query

import (
	"errors"
	"testing"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

func TestPortRate(t *testing.T) {
	cases := []struct {
		width, speed, ext uint8
		extCap            bool
		want              string
	}{
		{2, 1, 0, true, "10 Gb/sec (4X SDR)"}, // what ibsim reports
		{1, 1, 0, false, "2.5 Gb/sec (1X SDR)"},
		{8, 4, 0, false, "120 Gb/sec (12X QDR)"},
		{16, 2, 0, false, "10 Gb/sec (2X DDR)"},
		{2, 4, 2, true, "100 Gb/sec (4X EDR)"},
		{2, 4, 4, true, "200 Gb/sec (4X HDR)"},
		{2, 4, 8, true, "400 Gb/sec (4X NDR)"},
		{2, 4, 1, true, "56 Gb/sec (4X FDR)"},
		{2, 4, 2, false, "40 Gb/sec (4X QDR)"}, // no extended speeds: ext ignored
		{3, 1, 0, false, ""},
		{2, 3, 0, false, ""},
		{2, 1, 3, true, ""},
	}
	for _, tc := range cases {
		pi := mad.PortInfo{LinkWidthActive: tc.width, LinkSpeedActive: tc.speed, LinkSpeedExtActive: tc.ext}
		var capMask uint32
		if tc.extCap {
			capMask = mad.CapExtendedSpeeds
		}
		r := portRate(pi, capMask)
		if tc.want == "" {
			if r.OK() {
				t.Errorf("%+v: rate %q, want n/a", tc, r.Value.Text)
			}
			continue
		}
		if !r.OK() || r.Value.Text != tc.want {
			t.Errorf("%+v: rate %q (%s), want %q", tc, r.Value.Text, r.Missing, tc.want)
		}
	}
}

func TestSelectFabricPorts(t *testing.T) {
	ca := mad.NodeInfo{NodeType: mad.NodeCA, NumPorts: 2, LocalPortNum: 2}
	sw := mad.NodeInfo{NodeType: mad.NodeSwitch, NumPorts: 8, LocalPortNum: 3}
	cases := []struct {
		sel  FabricSelector
		ni   mad.NodeInfo
		want []int
	}{
		{FabricSelector{}, ca, []int{2}}, // the arrival port
		{FabricSelector{}, sw, []int{0}}, // a switch's LID is port 0's
		{FabricSelector{Port: 1, HasPort: true}, ca, []int{1}},
		{FabricSelector{AllPorts: true}, ca, []int{1, 2}},
		{FabricSelector{AllPorts: true}, sw, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{FabricSelector{Port: 0, HasPort: true}, ca, nil},
		{FabricSelector{Port: 9, HasPort: true}, sw, nil},
	}
	for _, tc := range cases {
		got, err := selectFabricPorts(tc.sel, tc.ni)
		if tc.want == nil {
			if nf := (*NotFoundError)(nil); !errors.As(err, &nf) {
				t.Errorf("%+v on %v: %v, %v; want a NotFoundError", tc.sel, tc.ni.NodeType, got, err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%+v on %v: %v, %v; want %v", tc.sel, tc.ni.NodeType, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%+v on %v: %v; want %v", tc.sel, tc.ni.NodeType, got, tc.want)
			}
		}
	}
}
