package k6labels

import (
	"context"
	"runtime/pprof"
	"unsafe"
)

// The goroutine's label pointer is read and written directly so that Do can
// restore exactly what the goroutine had, which no public API can read. The
// pointer is opaque here: it is only saved and put back, never looked into.
// The runtime keeps these two functions linkable, with this signature, for
// packages that already link them (see runtime/proflabel.go), so this does
// not depend on the layout of pprof's label map.

//go:linkname getProfLabel runtime/pprof.runtime_getProfLabel
func getProfLabel() unsafe.Pointer

//go:linkname setProfLabel runtime/pprof.runtime_setProfLabel
func setProfLabel(unsafe.Pointer)

// labelsKey is the key under which runtime/pprof keeps a context's labels,
// learnt once by asking pprof to read a context that records the keys it is
// asked for, so that hasLabels is one lookup. It is nil, and hasLabels asks
// pprof, if pprof ever stops reading labels that way.
//
// 32 of 1,693 instructions per k6 request (1.9%, BenchmarkHandler/Jslib,
// Valgrind); with the prof memo and the inlined serve path, 140 (8.3%): what
// keeps a request under 10% of x/k6's instructions.
var labelsKey = func() any {
	rec := &keyRecorder{Context: context.Background()}
	pprof.ForLabels(rec, func(string, string) bool { return false })
	labelled := pprof.WithLabels(context.Background(), pprof.Labels("k", "v"))
	if len(rec.keys) != 1 || labelled.Value(rec.keys[0]) == nil || context.Background().Value(rec.keys[0]) != nil {
		return nil
	}
	return rec.keys[0]
}()

// keyRecorder is a context that records the keys it is asked for.
type keyRecorder struct {
	context.Context
	keys []any
}

func (c *keyRecorder) Value(key any) any {
	c.keys = append(c.keys, key)
	return nil
}
