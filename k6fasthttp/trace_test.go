package k6fasthttp_test

import (
	"bytes"
	"errors"
	"io"
	rtrace "runtime/trace"
	"testing"

	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/k6fasthttp"
	"github.com/valyala/fasthttp"
	xtrace "golang.org/x/exp/trace"
)

// TestTraceTask: with the execution tracer on, a labelled fasthttp request
// over 127.0.0.1 runs as one k6labels request task logging its members, a
// request without k6 baggage as none, and every task ends, read back with
// golang.org/x/exp/trace.
func TestTraceTask(t *testing.T) {
	addr := serve(t, k6fasthttp.NewHandler(func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString(labels(k6fasthttp.Context(ctx)))
	}))
	c := dial(t, addr)
	defer c.close()
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		t.Skip("the execution tracer is busy:", err)
	}
	c.getWith("/a", "Baggage: "+baggageA)
	c.getWith("/b", "Baggage: a=1")
	c.getWith("/a", "Baggage: "+baggageA)
	rtrace.Stop()
	r, err := xtrace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	begun, ended := 0, 0
	var logs []string
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind() {
		case xtrace.EventTaskBegin:
			if ev.Task().Type == k6labels.TraceTaskType {
				begun++
			}
		case xtrace.EventTaskEnd:
			if ev.Task().Type == k6labels.TraceTaskType {
				ended++
			}
		case xtrace.EventLog:
			if l := ev.Log(); l.Category == k6labels.TraceLogCategory {
				logs = append(logs, l.Message)
			}
		}
	}
	if begun != 2 || ended != 2 || len(logs) != 2 {
		t.Errorf("%d tasks begun, %d ended, logs %q; want 2, 2 and two", begun, ended, logs)
	}
}
