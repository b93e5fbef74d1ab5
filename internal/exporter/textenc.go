package exporter

import (
	"math"
	"strconv"

	dto "github.com/prometheus/client_model/go"
)

// textFamily appends mf to w in the text exposition format (version 0.0.4) exactly as
// expfmt.MetricFamilyToText writes it (TestTextFamilyMatchesExpfmt), for the families
// the exporter makes: gauges, counters and untyped ones whose metric and label names
// need no quoting. expfmt's writer goes through an interface call per piece and
// strings.Replacer per label value, a fifth of a 2,000-node sweep's CPU; this appends
// each line whole. ok false: a family it leaves to expfmt, and nothing is written.
// line is scratch memory, returned for the next call.
func textFamily(w *blockWriter, mf *dto.MetricFamily, line []byte) (_ []byte, ok bool) {
	name := mf.GetName()
	if len(mf.Metric) == 0 || !legacyName(name) {
		return line, false
	}
	typ := mf.GetType()
	var lastNames []string // label names already checked, by position
	for _, m := range mf.Metric {
		switch {
		case typ == dto.MetricType_COUNTER && m.Counter != nil:
		case typ == dto.MetricType_GAUGE && m.Gauge != nil:
		case typ == dto.MetricType_UNTYPED && m.Untyped != nil:
		default:
			return line, false
		}
		for i, lp := range m.Label {
			n := lp.GetName()
			if i < len(lastNames) && lastNames[i] == n {
				continue
			}
			if !legacyName(n) {
				return line, false
			}
			if i < len(lastNames) {
				lastNames[i] = n
			} else {
				lastNames = append(lastNames, n)
			}
		}
	}
	line = line[:0]
	if mf.Help != nil {
		line = append(line, "# HELP "...)
		line = append(line, name...)
		line = append(line, ' ')
		line = appendEscaped(line, *mf.Help, false)
		line = append(line, '\n')
	}
	line = append(line, "# TYPE "...)
	line = append(line, name...)
	line = append(line, [...]string{dto.MetricType_COUNTER: " counter\n", dto.MetricType_GAUGE: " gauge\n", dto.MetricType_UNTYPED: " untyped\n"}[typ]...)
	_, _ = w.Write(line)
	for _, m := range mf.Metric {
		line = append(line[:0], name...)
		if len(m.Label) > 0 {
			sep := byte('{')
			for _, lp := range m.Label {
				line = append(line, sep)
				line = append(line, lp.GetName()...)
				line = append(line, '=', '"')
				line = appendEscaped(line, lp.GetValue(), true)
				line = append(line, '"')
				sep = ','
			}
			line = append(line, '}')
		}
		line = append(line, ' ')
		var v float64
		switch typ {
		case dto.MetricType_COUNTER:
			v = m.Counter.GetValue()
		case dto.MetricType_GAUGE:
			v = m.Gauge.GetValue()
		default:
			v = m.Untyped.GetValue()
		}
		line = appendFloat(line, v)
		if m.TimestampMs != nil {
			line = append(line, ' ')
			line = strconv.AppendInt(line, *m.TimestampMs, 10)
		}
		line = append(line, '\n')
		_, _ = w.Write(line)
	}
	return line, true
}

// legacyName is model.LegacyValidation.IsValidMetricName: names expfmt writes as they
// are, [a-zA-Z_:][a-zA-Z0-9_:]*.
func legacyName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_' || b == ':' || b >= '0' && b <= '9' && i > 0) {
			return false
		}
	}
	return true
}

// appendEscaped is expfmt's escaper (help text: \ and newline) or quotedEscaper (label
// values: also ").
func appendEscaped(b []byte, s string, quote bool) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '"':
			if !quote {
				continue
			}
			esc = `\"`
		default:
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, esc...)
		start = i + 1
	}
	return append(b, s[start:]...)
}

// appendFloat is expfmt's writeFloat.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case f == 1:
		return append(b, '1')
	case f == 0:
		return append(b, '0')
	case f == -1:
		return append(b, "-1"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, +1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
