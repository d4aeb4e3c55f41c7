package kubecompat

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// CoreRecorder records Events through core/v1, for API servers that do not
// serve events.k8s.io/v1 and grants that allow only core Events (coreos'
// Role). It has the events.k8s.io-style methods the reconciler calls; core
// Events carry no action and no related object, so those are dropped.
type CoreRecorder struct {
	Recorder record.EventRecorder
}

// Eventf implements events.EventRecorder.
func (c CoreRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	c.Recorder.Eventf(regarding, eventtype, reason, note, args...)
}

// AnnotatedEventf implements events.AnnotatedEventRecorder.
func (c CoreRecorder) AnnotatedEventf(regarding, _ runtime.Object, annotations map[string]string, eventtype, reason, _, note string, args ...any) {
	c.Recorder.AnnotatedEventf(regarding, annotations, eventtype, reason, note, args...)
}
