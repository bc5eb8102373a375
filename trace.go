package k6labels

import (
	"context"
	"runtime/trace"
)

// TraceTaskType is the type of the runtime/trace task that a labelled request
// runs as while the execution tracer is on (see [DoRequest]). Tools that read
// an execution trace find a request's span, and the goroutines it ran on,
// through the tasks of this type.
const TraceTaskType = "k6labels.request"

// TraceLogCategory is the category of the one runtime/trace log event that
// each request task carries. Its message is the request's k6 members as
// [Baggage] returns them: a W3C baggage value "k6.name=…,k6.scenario=…,
// k6.test_run_id=…" with ',', '%' and other delimiters in values
// percent-encoded; a member is cut at its first '=', and [LabelName] turns
// its key into the pprof label name.
const TraceLogCategory = "k6labels"

// DoRequest is [Do] for one request: f(ctx) runs with ctx's pprof labels on
// the goroutine, and, while the execution tracer is on, as a trace task of
// [TraceTaskType] that logs ctx's k6 members once under [TraceLogCategory].
// The task ends when f returns or panics. If ctx is already in such a task
// (a request labelled twice), no new task begins: the members are logged
// again in that task, and the last log wins. Without tracing it costs what Do
// costs, with no allocation.
func DoRequest(ctx context.Context, f func(context.Context)) {
	prev := getProfLabel()
	defer setProfLabel(prev)
	setGoroutineLabels(ctx)
	if trace.IsEnabled() {
		tctx, task := traceTask(ctx)
		if task != nil {
			defer task.End()
		}
		f(tctx)
		return
	}
	f(ctx)
}

// requestTask is traceTask while the tracer is on, and (ctx, nil) otherwise.
func requestTask(ctx context.Context) (context.Context, *trace.Task) {
	if !trace.IsEnabled() {
		return ctx, nil
	}
	return traceTask(ctx)
}

// endTask ends task, if there is one.
func endTask(task *trace.Task) {
	if task != nil {
		task.End()
	}
}

// taskKey marks a context that is inside a request task of ours.
type taskKey struct{}

// traceTask begins the request task of ctx, whose k6 members are logged in
// it, or logs them in the request task ctx is already in. The caller ends
// the task it returns, if not nil.
func traceTask(ctx context.Context) (context.Context, *trace.Task) {
	msg := Baggage(ctx)
	if ctx.Value(taskKey{}) != nil {
		trace.Log(ctx, TraceLogCategory, msg)
		return ctx, nil
	}
	tctx, task := trace.NewTask(ctx, TraceTaskType)
	tctx = context.WithValue(tctx, taskKey{}, task)
	trace.Log(tctx, TraceLogCategory, msg)
	return tctx, task
}
