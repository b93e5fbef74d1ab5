package exporter

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// TestTextFamilyMatchesExpfmt: random families, with the label values, help texts and
// numbers that need care, are byte for byte what expfmt.MetricFamilyToText writes;
// families textFamily leaves to expfmt (a histogram, a name that needs quoting, a
// gauge without its value) are refused with nothing written.
func TestTextFamilyMatchesExpfmt(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	odd := []string{"", "plain", `q"uote`, `back\slash`, "new\nline", "tab\there", "héllo", "\xff", `\"\n`, strings.Repeat("x", 300)}
	names := []string{"ibkey_port_pkey_entries", "a", "_x", "x:y", "node_desc", "port", "le"}
	floats := []float64{0, 1, -1, 0.5, 1e21, 1e-7, 123456789, -3.25, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1)}
	types := []dto.MetricType{dto.MetricType_GAUGE, dto.MetricType_COUNTER, dto.MetricType_UNTYPED}
	var line []byte
	for i := range 3000 {
		mf := &dto.MetricFamily{Name: ptr(names[r.IntN(len(names))]), Type: types[r.IntN(len(types))].Enum()}
		if r.IntN(3) > 0 {
			mf.Help = ptr(odd[r.IntN(len(odd))])
		}
		for range 1 + r.IntN(5) {
			m := &dto.Metric{}
			for k := range r.IntN(4) {
				m.Label = append(m.Label, &dto.LabelPair{Name: ptr(names[(k+i)%len(names)]), Value: ptr(odd[r.IntN(len(odd))])})
			}
			v := floats[r.IntN(len(floats))]
			if r.IntN(2) == 0 {
				v = math.Float64frombits(r.Uint64())
			}
			switch mf.GetType() {
			case dto.MetricType_GAUGE:
				m.Gauge = &dto.Gauge{Value: ptr(v)}
			case dto.MetricType_COUNTER:
				m.Counter = &dto.Counter{Value: ptr(v)}
			default:
				m.Untyped = &dto.Untyped{Value: ptr(v)}
			}
			if r.IntN(4) == 0 {
				m.TimestampMs = ptr(r.Int64() - math.MaxInt64/2)
			}
			mf.Metric = append(mf.Metric, m)
		}
		var want bytes.Buffer
		if _, err := expfmt.MetricFamilyToText(&want, mf); err != nil {
			t.Fatal(err)
		}
		var w blockWriter
		var ok bool
		if line, ok = textFamily(&w, mf, line); !ok {
			t.Fatalf("case %d: refused %v", i, mf)
		}
		if got := bytes.Join(w.since(blockMark{}), nil); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("case %d:\n got %q\nwant %q", i, got, want.Bytes())
		}
	}
	g := func(name string) *dto.MetricFamily {
		return &dto.MetricFamily{Name: ptr(name), Type: dto.MetricType_GAUGE.Enum(),
			Metric: []*dto.Metric{{Label: []*dto.LabelPair{{Name: ptr("port"), Value: ptr("1")}}, Gauge: &dto.Gauge{Value: ptr(1.0)}}}}
	}
	badLabel := g("x")
	badLabel.Metric[0].Label[0].Name = ptr("1port")
	noValue := g("x")
	noValue.Metric[0].Gauge = nil
	hist := g("x")
	hist.Type = dto.MetricType_HISTOGRAM.Enum()
	for _, mf := range []*dto.MetricFamily{g("9lives"), g("dotted.name"), g(""), badLabel, noValue, hist, {Name: ptr("empty")}} {
		var w blockWriter
		if _, ok := textFamily(&w, mf, nil); ok || w.size() != 0 {
			t.Errorf("%v: written (%d bytes), want it left to expfmt", mf, w.size())
		}
	}
}

func ptr[T any](v T) *T { return &v }
