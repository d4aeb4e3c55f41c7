package framework

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
)

// scrapeTimeout bounds one scrape of the operator's metrics endpoint: a
// registry of a few hundred series answers in milliseconds.
const scrapeTimeout = 10 * time.Second

// MetricFamilies are a scrape's metrics by name.
type MetricFamilies map[string]*dto.MetricFamily

// OperatorScrape is what one operator pod's metrics endpoint served.
type OperatorScrape struct {
	Pod      string
	Families MetricFamilies
	// Err says why the endpoint could not be read (nothing listening, an
	// HTTP error, a body that is not the text format).
	Err error
}

// ScrapeOperatorMetrics reads the metrics endpoint (port, path) of every
// running pod of the operator's Deployment through a port-forward, which
// reaches a listener on the pod's 127.0.0.1 as well. An error means no
// pod could be reached at all; a pod whose endpoint does not answer has
// its Err set.
func (e *Env) ScrapeOperatorMetrics(ctx context.Context, port int, path string) ([]OperatorScrape, error) {
	pods, err := e.OperatorPods(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the operator's pods: %w", err)
	}
	var out []OperatorScrape
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		local, stop, err := e.Forward(p.Namespace, p.Name, port)
		if err != nil {
			return nil, fmt.Errorf("port-forward to operator pod %s: %w", p.Name, err)
		}
		families, err := scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d%s", local, path))
		stop()
		out = append(out, OperatorScrape{Pod: p.Name, Families: families, Err: err})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no running pod of operator deployment %s/%s", e.Profile.Operator.Namespace, e.Profile.Operator.Deployment)
	}
	return out, nil
}

// scrape GETs a metrics endpoint in Prometheus' text format.
func scrape(ctx context.Context, url string) (MetricFamilies, error) {
	return scrapeWith(ctx, http.DefaultClient, url)
}

// scrapeWith is scrape with an HTTP client of the caller's (TLS).
func scrapeWith(ctx context.Context, client *http.Client, url string) (MetricFamilies, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// The text format every Prometheus client library serves, old ones
	// (coreos v0.9.4's) included.
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", req.URL.Path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", req.URL.Path, resp.Status, body)
	}
	return ParseMetrics(resp.Body)
}

// ParseMetrics reads Prometheus' text exposition format.
func ParseMetrics(r io.Reader) (MetricFamilies, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("not Prometheus' text format: %w", err)
	}
	return families, nil
}

// Sample is one series of a metric: its labels and value.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Samples are the series of metric whose labels include every one of
// labels, with those values. A metric that is not a counter, gauge or
// untyped (a histogram, a summary) has no single value to compare: an
// error.
func (f MetricFamilies) Samples(metric string, labels map[string]string) ([]Sample, error) {
	mf, ok := f[metric]
	if !ok {
		return nil, nil
	}
	var out []Sample
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		if !includes(have, labels) {
			continue
		}
		var v float64
		switch mf.GetType() {
		case dto.MetricType_GAUGE:
			v = m.GetGauge().GetValue()
		case dto.MetricType_COUNTER:
			v = m.GetCounter().GetValue()
		case dto.MetricType_UNTYPED:
			v = m.GetUntyped().GetValue()
		default:
			return nil, fmt.Errorf("metric %s is a %s, not a gauge, counter or untyped value", metric, mf.GetType())
		}
		out = append(out, Sample{Labels: have, Value: v})
	}
	return out, nil
}

func includes(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
