package html

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/history"
)

// The timeline SVG's layout, in its user units (viewBox): the throughput
// panel, a lane for failed requests, the latency panel and the time axis,
// stacked over one shared x axis.
const (
	chartWidth     = 960
	chartHeight    = 310
	plotLeft       = 64
	plotRight      = 944
	opsTop         = 24
	opsBottom      = 124
	failLaneY      = 142
	latencyTop     = 164
	latencyBottom  = 264
	xLabelY        = 280
	axisTitleY     = 302
	gapLabelY      = 16
	maxMarksDrawn  = 400 // per failure class: beyond it a mark adds ink, not information
	minLatencyMs   = 0.1
	latencyDecades = 10
)

// chart is a Timeline laid out for the SVG template: every coordinate is
// computed here, so the template only places elements and the layout is
// testable without a browser.
type chart struct {
	Width, Height, Left, Right     float64
	OpsTop, OpsBottom              float64
	LatencyTop, LatencyBottom      float64
	FailLaneY, XLabelY, AxisTitleY float64
	PlotWidth, OpsHeight, OpsMid   float64
	LatencyHeight, LatencyMid      float64
	XTicks, OpsTicks, LatencyTicks []tick
	Throughput                     string
	P50, P99                       []string
	Definite, Indeterminate        []mark
	HiddenMarks                    int
	Gap                            *gapBand
	// Events is the lane of the cluster's events, when any happened
	// during the phase (withEvents).
	Events *eventLane
	// Seconds is how many seconds the time axis spans.
	Seconds int
	// x places a time of the phase on the axis.
	x func(time.Duration) float64
}

type tick struct {
	At    float64
	Label string
}

// mark is one failed request; Title is its tooltip.
type mark struct {
	X, Y  float64
	Title string
}

// gapBand shades the longest write gap across both panels.
type gapBand struct {
	X, Y, W, H     float64
	LabelX, LabelY float64
	Label          string
}

// newChart lays out a timeline; nil when it holds no request.
func newChart(tl Timeline) *chart {
	if len(tl.Seconds) == 0 {
		return nil
	}
	c := &chart{Width: chartWidth, Height: chartHeight, Left: plotLeft, Right: plotRight,
		OpsTop: opsTop, OpsBottom: opsBottom, LatencyTop: latencyTop, LatencyBottom: latencyBottom,
		FailLaneY: failLaneY, XLabelY: xLabelY, AxisTitleY: axisTitleY, Seconds: len(tl.Seconds),
		PlotWidth: plotRight - plotLeft, OpsHeight: opsBottom - opsTop, OpsMid: (opsTop + opsBottom) / 2,
		LatencyHeight: latencyBottom - latencyTop, LatencyMid: (latencyTop + latencyBottom) / 2}
	span := time.Duration(len(tl.Seconds)) * time.Second
	x := func(t time.Duration) float64 { return plotLeft + float64(t)/float64(span)*(plotRight-plotLeft) }
	c.x = x
	c.XTicks = timeTicks(span, x)

	maxOps := 1
	for _, s := range tl.Seconds {
		maxOps = max(maxOps, s.Requests)
	}
	opsScale := niceCeil(float64(maxOps))
	yOps := func(v float64) float64 { return opsBottom - v/opsScale*(opsBottom-opsTop) }
	for _, v := range []float64{0, opsScale / 2, opsScale} {
		c.OpsTicks = append(c.OpsTicks, tick{At: yOps(v), Label: trimFloat(v)})
	}
	var ops []string
	for _, s := range tl.Seconds {
		ops = append(ops, point(x(s.Start+time.Second/2), yOps(float64(s.Requests))))
	}
	c.Throughput = strings.Join(ops, " ")

	lo, hi := latencyRange(tl.Seconds)
	yLat := func(d time.Duration) float64 {
		ms := max(milliseconds(d), minLatencyMs)
		return latencyBottom - (math.Log10(ms)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(latencyBottom-latencyTop)
	}
	for v := lo; v <= hi*1.0001; v *= 10 {
		c.LatencyTicks = append(c.LatencyTicks, tick{At: yLat(time.Duration(v * float64(time.Millisecond))), Label: latencyLabel(v)})
	}
	c.P50 = segments(tl.Seconds, x, func(s Second) float64 { return yLat(s.P50) })
	c.P99 = segments(tl.Seconds, x, func(s Second) float64 { return yLat(s.P99) })

	for _, f := range tl.Failures {
		m := mark{X: x(f.At), Y: failLaneY, Title: failureTitle(f)}
		switch {
		case f.Class == history.Definite && len(c.Definite) < maxMarksDrawn:
			m.Y -= 5
			c.Definite = append(c.Definite, m)
		case f.Class != history.Definite && len(c.Indeterminate) < maxMarksDrawn:
			m.Y += 5
			c.Indeterminate = append(c.Indeterminate, m)
		default:
			c.HiddenMarks++
		}
	}

	if g := tl.LongestWriteGap; g.Length() > 0 {
		b := &gapBand{X: x(g.From), Y: opsTop, W: max(x(g.To)-x(g.From), 1), H: latencyBottom - opsTop, LabelY: gapLabelY,
			Label: fmt.Sprintf("longest write gap %.2f s", g.Length().Seconds())}
		// Keep the label inside the plot even when the gap is at an edge.
		b.LabelX = min(max(b.X+b.W/2, plotLeft+90), plotRight-90)
		c.Gap = b
	}
	return c
}

// segments draws one series as polylines broken at the seconds in which no
// request succeeded: a line across them would invent latencies.
func segments(seconds []Second, x func(time.Duration) float64, y func(Second) float64) []string {
	var out, cur []string
	for _, s := range seconds {
		if s.Answered == 0 {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, " "))
			}
			cur = nil
			continue
		}
		cur = append(cur, point(x(s.Start+time.Second/2), y(s)))
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

// latencyRange is the log axis's range in milliseconds: whole decades
// around every second's p50 and p99, at most latencyDecades of them.
func latencyRange(seconds []Second) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, s := range seconds {
		if s.Answered == 0 {
			continue
		}
		lo = min(lo, max(milliseconds(s.P50), minLatencyMs))
		hi = max(hi, max(milliseconds(s.P99), minLatencyMs))
	}
	if hi == 0 {
		return 1, 1000
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	lo = max(lo, hi/math.Pow(10, latencyDecades))
	return lo, hi
}

// timeTicks puts at most a dozen labelled ticks on the time axis, at a
// step people count in.
func timeTicks(span time.Duration, x func(time.Duration) float64) []tick {
	step := time.Second
	for _, s := range []int{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600} {
		step = time.Duration(s) * time.Second
		if span/step <= 12 {
			break
		}
	}
	var ticks []tick
	for t := time.Duration(0); t <= span; t += step {
		ticks = append(ticks, tick{At: x(t), Label: trimFloat(t.Seconds())})
	}
	return ticks
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func failureTitle(f Failure) string {
	class := string(f.Class)
	if f.Retry {
		class += ", a retry"
	}
	return fmt.Sprintf("%.3f s: %s %s failed (%s): %s", f.At.Seconds(), f.Kind, f.Key, class, f.Error)
}

func latencyLabel(ms float64) string {
	if ms >= 1000 {
		return trimFloat(ms/1000) + " s"
	}
	return trimFloat(ms) + " ms"
}

func milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func point(x, y float64) string { return fmt.Sprintf("%.1f,%.1f", x, y) }

// trimFloat prints 2.5 as "2.5" and 10 as "10".
func trimFloat(v float64) string { return fmt.Sprintf("%g", math.Round(v*1000)/1000) }
