package html

import (
	"fmt"
	"slices"
	"time"

	"github.com/etcdproof/etcdproof/conformance/report"
)

// The events lane, in the timeline's user units: under the latency panel
// of a traffic phase's chart, or alone in a check's events-only timeline.
const (
	laneHeight = 22
	// laneMargin parts the lane from the latency panel above it.
	laneMargin = 8
	// laneGap is the room the lane takes below the latency panel.
	laneGap = laneMargin + laneHeight
	// Events-only timeline: the lane, then the time axis.
	eventsOnlyLaneTop = 8
	eventsOnlyXLabelY = 46
	eventsOnlyTitleY  = 66
	eventsOnlyHeight  = 74
	// maxEventTicksDrawn: beyond it a tick adds ink, not information (the
	// table still lists every event).
	maxEventTicksDrawn = maxMarksDrawn
	// tableOpenAtMostRows: a longer list of events is folded, so the next
	// timeline stays near the one above it.
	tableOpenAtMostRows = 12
)

// eventLane is a row of ticks, one per event, coloured by level; Title is
// each tick's hover text.
type eventLane struct {
	Left, Width, Top, Height, Mid float64
	Normal, Warning               []eventTick
	// Hidden counts the events beyond maxEventTicksDrawn.
	Hidden int
}

type eventTick struct {
	X, Y1, Y2 float64
	Title     string
}

// eventTable lists events under a timeline; Open leaves a short list
// unfolded.
type eventTable struct {
	Caption string
	Rows    []eventRow
	Open    bool
}

// eventRow is one event; At is its time on the timeline above it.
type eventRow struct {
	At, Source, Object, Reason, Message string
	Warning                             bool
}

// placedEvent is an event at its offset from a timeline's zero.
type placedEvent struct {
	At time.Duration
	report.Event
}

// eventsOnlyChart is the timeline of a check whose events no traffic
// phase could place: the lane and a time axis.
type eventsOnlyChart struct {
	Width, Height, Left, Right, PlotWidth float64
	XLabelY, AxisTitleY                   float64
	// GridTop and GridBottom bound the time ticks' lines: from the
	// lane's top to just above their labels.
	GridTop, GridBottom float64
	XTicks              []tick
	Lane                *eventLane
	AxisTitle           string
	Seconds             int
}

// eventsOnlyView is a check's events-only timeline and its table.
type eventsOnlyView struct {
	Chart *eventsOnlyChart
	Table eventTable
}

// eventsWithin are the events from zero to zero+span, at their offsets.
func eventsWithin(events []report.Event, zero time.Time, span time.Duration) (in []placedEvent, placed []bool) {
	placed = make([]bool, len(events))
	for i, ev := range events {
		if at := ev.Time.Sub(zero); at >= 0 && at <= span {
			in = append(in, placedEvent{At: at, Event: ev})
			placed[i] = true
		}
	}
	return in, placed
}

// newEventLane draws events on an axis x, between top and top+laneHeight.
func newEventLane(events []placedEvent, x func(time.Duration) float64, top float64) *eventLane {
	l := &eventLane{Left: plotLeft, Width: plotRight - plotLeft, Top: top, Height: laneHeight, Mid: top + laneHeight/2}
	for i, ev := range events {
		if i >= maxEventTicksDrawn {
			l.Hidden = len(events) - i
			break
		}
		t := eventTick{X: x(ev.At), Y1: top + 3, Y2: top + laneHeight - 3, Title: eventTitle(ev)}
		if ev.Level == report.LevelWarning {
			l.Warning = append(l.Warning, t)
		} else {
			l.Normal = append(l.Normal, t)
		}
	}
	return l
}

// withEvents adds an events lane under the latency panel and moves the
// time axis down to make room.
func (c *chart) withEvents(events []placedEvent) {
	if len(events) == 0 {
		return
	}
	c.Events = newEventLane(events, c.x, c.LatencyBottom+laneMargin)
	c.XLabelY += laneGap
	c.AxisTitleY += laneGap
	c.Height += laneGap
}

// newEventsOnlyChart lays out events from zero (the check's start) over
// at least span, on whole seconds.
func newEventsOnlyChart(events []placedEvent, span time.Duration, axisTitle string) *eventsOnlyChart {
	for _, ev := range events {
		span = max(span, ev.At)
	}
	seconds := max(int((span+time.Second-1)/time.Second), 1)
	span = time.Duration(seconds) * time.Second
	x := func(t time.Duration) float64 { return plotLeft + float64(t)/float64(span)*(plotRight-plotLeft) }
	return &eventsOnlyChart{Width: chartWidth, Height: eventsOnlyHeight, Left: plotLeft, Right: plotRight, PlotWidth: plotRight - plotLeft,
		XLabelY: eventsOnlyXLabelY, AxisTitleY: eventsOnlyTitleY, GridTop: eventsOnlyLaneTop, GridBottom: eventsOnlyXLabelY - 12, XTicks: timeTicks(span, x), Lane: newEventLane(events, x, eventsOnlyLaneTop),
		AxisTitle: axisTitle, Seconds: seconds}
}

// checkEvents places a check's events: on the lanes of the traffic phases
// whose time they fall in, listed under each; the others in a table of
// their own. A check none of whose phases can place events (no traffic,
// or histories without a start time) gets an events-only timeline from
// its start instead, so every check with events has a timeline.
func checkEvents(v *checkView, c *report.Check, starts map[string]time.Time) {
	events := slices.Clone(c.Events)
	slices.SortStableFunc(events, func(a, b report.Event) int { return a.Time.Compare(b.Time) })
	placedAny := make([]bool, len(events))
	lanes := 0
	for i := range v.Phases {
		p := &v.Phases[i]
		zero, ok := starts[p.Name]
		if p.Chart == nil || !ok || zero.IsZero() {
			continue
		}
		lanes++
		in, placed := eventsWithin(events, zero, time.Duration(p.Chart.Seconds)*time.Second)
		for j, ok := range placed {
			placedAny[j] = placedAny[j] || ok
		}
		p.Chart.withEvents(in)
		if len(in) > 0 {
			p.Events = &eventTable{Caption: fmt.Sprintf("%s during this phase (seconds since the phase started)", countEvents(len(in))),
				Rows: eventRows(in), Open: len(in) <= tableOpenAtMostRows}
		}
	}
	if len(events) == 0 {
		return
	}
	if lanes == 0 {
		zero, title := c.Started, "seconds since the check started"
		if zero.IsZero() || events[0].Time.Before(zero) {
			zero, title = events[0].Time, "seconds since the first event"
		}
		in := make([]placedEvent, len(events))
		for i, ev := range events {
			in[i] = placedEvent{At: ev.Time.Sub(zero), Event: ev}
		}
		end := c.Started.Add(time.Duration(float64(c.Duration) * float64(time.Millisecond))).Sub(zero)
		v.EventsOnly = &eventsOnlyView{Chart: newEventsOnlyChart(in, end, title),
			Table: eventTable{Caption: fmt.Sprintf("%s (%s)", countEvents(len(in)), title), Rows: eventRows(in), Open: len(in) <= tableOpenAtMostRows}}
		return
	}
	var rest []placedEvent
	for i, ev := range events {
		if !placedAny[i] {
			rest = append(rest, placedEvent{At: ev.Time.Sub(c.Started), Event: ev})
		}
	}
	if len(rest) > 0 {
		caption := fmt.Sprintf("%s outside the traffic phases (seconds since the check started)", countEvents(len(rest)))
		if c.Started.IsZero() {
			caption = fmt.Sprintf("%s outside the traffic phases", countEvents(len(rest)))
		}
		v.OtherEvents = &eventTable{Caption: caption, Rows: eventRows(rest)}
		if c.Started.IsZero() {
			for i := range v.OtherEvents.Rows {
				v.OtherEvents.Rows[i].At = rest[i].Time.UTC().Format("15:04:05.000")
			}
		}
	}
}

func eventRows(events []placedEvent) []eventRow {
	rows := make([]eventRow, len(events))
	for i, ev := range events {
		rows[i] = eventRow{At: fmt.Sprintf("%.2f s", ev.At.Seconds()), Source: string(ev.Source), Object: ev.Object, Reason: ev.Reason,
			Message: ev.Message, Warning: ev.Level == report.LevelWarning}
	}
	return rows
}

func eventTitle(ev placedEvent) string {
	title := fmt.Sprintf("%.2f s · %s %s · %s", ev.At.Seconds(), ev.Source, ev.Object, ev.Reason)
	if ev.Message != "" {
		title += ": " + ev.Message
	}
	return title
}

func countEvents(n int) string {
	if n == 1 {
		return "1 cluster event"
	}
	return fmt.Sprintf("%d cluster events", n)
}
