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

// profLabelOf returns the pointer that pprof.SetGoroutineLabels(ctx) puts on
// a goroutine, so that a label set can be put on many goroutines without a
// lookup through ctx each time. It sets ctx's labels on the calling
// goroutine for that long, then puts back what it had.
func profLabelOf(ctx context.Context) unsafe.Pointer {
	prev := getProfLabel()
	pprof.SetGoroutineLabels(ctx)
	p := getProfLabel()
	setProfLabel(prev)
	return p
}
