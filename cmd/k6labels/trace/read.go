// Package trace reads Go execution traces of services that k6labels marks,
// and measures each k6 request exactly: its wall time, on-CPU time, run-queue
// time and blocked time by reason, from the task that the k6labels library
// begins for each labelled request while the tracer is on.
//
// A request is one task of type k6labels.request. It is measured on the
// goroutine that began it and on every goroutine created, directly or not,
// from a goroutine of the task while the task runs, until the task ends.
// Memory grows with the requests and rows, not with the trace's events.
//
// The package is a source and its model: Report and Comparison (from Diff)
// hold figures, and package output writes them (output.WriteTrace and
// output.WriteTraceDiff).
package trace

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/k6labels/k6labels"
	xtrace "golang.org/x/exp/trace"
)

// Reason is what a request's goroutine was blocked on.
type Reason int

// The reasons blocked time is split by, in the order reports list them.
const (
	Network  Reason = iota // network I/O (the netpoller)
	Sync                   // sync.Mutex, RWMutex, WaitGroup, Cond and the like
	Channel                // channel send or receive
	Select                 // select
	Sleep                  // time.Sleep, time.After and timers
	Syscall                // in a system call
	GCAssist               // waiting for the garbage collector
	Other                  // any other reason
	NumReasons
)

var reasonNames = [NumReasons]string{"network", "sync", "channel", "select", "sleep", "syscall", "gc", "other"}

// String returns the reason's name as reports print it.
func (r Reason) String() string {
	if r >= 0 && r < NumReasons {
		return reasonNames[r]
	}
	return "reason(" + fmt.Sprint(int(r)) + ")"
}

// reasonOf maps the runtime's block reason strings (runtime/traceruntime.go)
// to a Reason.
func reasonOf(s string) Reason {
	switch {
	case s == "network":
		return Network
	case s == "sync" || strings.HasPrefix(s, "sync."):
		return Sync
	case s == "chan send" || s == "chan receive":
		return Channel
	case s == "select":
		return Select
	case s == "sleep":
		return Sleep
	case strings.HasPrefix(s, "GC ") || s == "wait until GC ends":
		return GCAssist
	}
	return Other
}

// Request is one request measured from its task. Durations are nanoseconds
// summed over the request's goroutines (so CPU may exceed Wall when it ran
// goroutines in parallel).
type Request struct {
	Labels   int   // index into Trace.Labels
	Wall     int64 // task begin to task end
	CPU      int64 // running on a P
	Runnable int64 // waiting for a P (the run queue)
	Blocked  [NumReasons]int64
}

// BlockedTotal returns the request's blocked time over all reasons.
func (r *Request) BlockedTotal() int64 {
	var t int64
	for _, b := range r.Blocked {
		t += b
	}
	return t
}

// Trace is what Read found.
type Trace struct {
	Labels   []map[string]string // distinct label sets, by pprof label name
	Requests []Request           // complete requests: task begin and end both in the window
	// Cut counts, per label set, the requests whose task began in the
	// window but had not ended when it closed.
	Cut map[int]int
	// CutUnknown counts tasks that ended in the window but began before it:
	// their labels were logged before the trace started.
	CutUnknown int
	// Unlabelled counts complete tasks that logged no k6 members.
	Unlabelled int
	// Stacks are the blocking stacks, by index; BlockedStacks sums blocked
	// time of complete requests per label set and stack.
	Stacks        []Stack
	BlockedStacks map[StackKey]int64
	Window        time.Duration // first to last event
	// GoroutineCPU is the on-CPU time of all goroutines in the window, and
	// SyscallTime their time in system calls: with a CPU profile of the same
	// window, the share of on-P time that the host really gave the process.
	GoroutineCPU int64
	SyscallTime  int64
}

// Stack is a blocking stack: the innermost frames first.
type Stack struct {
	Reason Reason
	Frames []string // "func file:line"
}

// StackKey names one stack's blocked time within one label set.
type StackKey struct{ Labels, Stack int }

// maxFrames is how many frames of a blocking stack are kept.
const maxFrames = 8

// Read reads an execution trace from r and measures its k6labels request
// tasks. It returns an error if r is not an execution trace that
// golang.org/x/exp/trace can read (Go 1.22 or later).
func Read(r io.Reader) (*Trace, error) {
	tr, err := xtrace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a Go execution trace (take one from /debug/pprof/trace or runtime/trace.Start): %w", err)
	}
	s := newState()
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the execution trace: %w", err)
		}
		s.event(&ev)
	}
	s.finish()
	return s.out, nil
}

type task struct {
	begin  xtrace.Time
	labels int // -1 until logged
	req    Request
	stacks map[int]int64
	gs     []xtrace.GoID
}

type goroutine struct {
	state xtrace.GoState
	since xtrace.Time
	task  *task
	stack int // the stack it blocked with, while waiting
	why   Reason
}

type state struct {
	out      *Trace
	tasks    map[xtrace.TaskID]*task
	gs       map[xtrace.GoID]*goroutine
	labelIDs map[string]int
	stackIDs map[string]int
	stackOf  map[xtrace.Stack]int // this generation's stacks
	first    xtrace.Time
	last     xtrace.Time
	started  bool
}

func newState() *state {
	return &state{
		out:      &Trace{Cut: map[int]int{}, BlockedStacks: map[StackKey]int64{}},
		tasks:    map[xtrace.TaskID]*task{},
		gs:       map[xtrace.GoID]*goroutine{},
		labelIDs: map[string]int{},
		stackIDs: map[string]int{},
		stackOf:  map[xtrace.Stack]int{},
	}
}

func (s *state) g(id xtrace.GoID) *goroutine {
	g := s.gs[id]
	if g == nil {
		g = &goroutine{state: xtrace.GoUndetermined, stack: -1}
		s.gs[id] = g
	}
	return g
}

func (s *state) event(ev *xtrace.Event) {
	t := ev.Time()
	if !s.started {
		s.first, s.started = t, true
	}
	s.last = t
	switch ev.Kind() {
	case xtrace.EventSync:
		clear(s.stackOf) // stacks are numbered per generation
	case xtrace.EventTaskBegin:
		tk := ev.Task()
		if tk.Type != k6labels.TraceTaskType {
			return
		}
		nt := &task{begin: t, labels: -1}
		s.tasks[tk.ID] = nt
		if gid := ev.Goroutine(); gid != xtrace.NoGoroutine {
			s.join(gid, nt, t)
			s.gs[gid].state = xtrace.GoRunning // it is running the begin
		}
	case xtrace.EventTaskEnd:
		tk := ev.Task()
		nt := s.tasks[tk.ID]
		if nt == nil {
			if tk.Type == k6labels.TraceTaskType || tk.Type == "" {
				// Begun before the window (Type "" when its begin is
				// not in the trace): its labels are unknown.
				if tk.Type == k6labels.TraceTaskType || s.isOurs(ev) {
					s.out.CutUnknown++
				}
			}
			return
		}
		delete(s.tasks, tk.ID)
		s.end(nt, t)
	case xtrace.EventLog:
		l := ev.Log()
		if l.Category != k6labels.TraceLogCategory {
			return
		}
		if nt := s.tasks[l.Task]; nt != nil {
			nt.labels = s.labelsID(l.Message)
		}
	case xtrace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != xtrace.ResourceGoroutine {
			return
		}
		s.transition(ev, st, t)
	}
}

// isOurs reports whether a task end whose begin is not in the trace is one
// of ours: it is, if it ended with k6labels' DoRequest or handler on the
// stack.
func (s *state) isOurs(ev *xtrace.Event) bool {
	for f := range ev.Stack().Frames() {
		if strings.HasPrefix(f.Func, "github.com/k6labels/k6labels.") {
			return true
		}
	}
	return false
}

// join attaches goroutine gid to task nt from time t.
func (s *state) join(gid xtrace.GoID, nt *task, t xtrace.Time) {
	g := s.g(gid)
	s.account(g, t)
	g.task = nt
	nt.gs = append(nt.gs, gid)
}

// account charges g's time in its current state, up to t, to its task, and
// restarts the clock at t.
func (s *state) account(g *goroutine, t xtrace.Time) {
	d := int64(t.Sub(g.since))
	if g.since == 0 || d < 0 {
		d = 0
	}
	g.since = t
	if d == 0 {
		return
	}
	switch g.state {
	case xtrace.GoRunning:
		s.out.GoroutineCPU += d
	case xtrace.GoSyscall:
		s.out.SyscallTime += d
	}
	nt := g.task
	if nt == nil {
		return
	}
	switch g.state {
	case xtrace.GoRunning:
		nt.req.CPU += d
	case xtrace.GoRunnable:
		nt.req.Runnable += d
	case xtrace.GoSyscall:
		nt.req.Blocked[Syscall] += d
	case xtrace.GoWaiting:
		nt.req.Blocked[g.why] += d
		if g.stack >= 0 {
			if nt.stacks == nil {
				nt.stacks = map[int]int64{}
			}
			nt.stacks[g.stack] += d
		}
	}
}

func (s *state) transition(ev *xtrace.Event, st xtrace.StateTransition, t xtrace.Time) {
	from, to := st.Goroutine()
	id := st.Resource.Goroutine()
	g := s.g(id)
	s.account(g, t)
	if from == xtrace.GoNotExist && to != xtrace.GoNotExist {
		// Created: it joins its creator's task, if any.
		g.task, g.stack = nil, -1
		if c := s.gs[ev.Goroutine()]; c != nil && c.task != nil && ev.Goroutine() != id {
			g.task = c.task
			c.task.gs = append(c.task.gs, id)
		}
	}
	g.state = to
	g.stack = -1
	if to == xtrace.GoWaiting {
		g.why = reasonOf(st.Reason)
		if g.task != nil {
			g.stack = s.stackID(g.why, st.Stack)
		}
	}
	if to == xtrace.GoNotExist {
		g.task = nil
		delete(s.gs, id)
	}
}

// end closes task nt at t: its goroutines are charged up to t and leave it.
func (s *state) end(nt *task, t xtrace.Time) {
	for _, id := range nt.gs {
		if g := s.gs[id]; g != nil && g.task == nt {
			s.account(g, t)
			g.task = nil
		}
	}
	nt.req.Wall = int64(t.Sub(nt.begin))
	if nt.labels < 0 {
		s.out.Unlabelled++
		return
	}
	nt.req.Labels = nt.labels
	s.out.Requests = append(s.out.Requests, nt.req)
	for st, d := range nt.stacks {
		s.out.BlockedStacks[StackKey{nt.labels, st}] += d
	}
}

func (s *state) finish() {
	for _, nt := range s.tasks {
		if nt.labels >= 0 {
			s.out.Cut[nt.labels]++
		} else {
			s.out.CutUnknown++
		}
	}
	// Goroutines still in a state at the end are charged up to it, for the
	// process-wide totals.
	for _, g := range s.gs {
		g.task = nil
		s.account(g, s.last)
	}
	s.out.Window = s.last.Sub(s.first)
}

func (s *state) labelsID(msg string) int {
	if id, ok := s.labelIDs[msg]; ok {
		return id
	}
	id := len(s.out.Labels)
	s.out.Labels = append(s.out.Labels, ParseMembers(msg))
	s.labelIDs[msg] = id
	return id
}

func (s *state) stackID(why Reason, stk xtrace.Stack) int {
	if id, ok := s.stackOf[stk]; ok {
		return id
	}
	var frames []string
	for f := range stk.Frames() {
		if len(frames) == maxFrames {
			break
		}
		frames = append(frames, fmt.Sprintf("%s %s:%d", f.Func, f.File, f.Line))
	}
	key := why.String() + "\x00" + strings.Join(frames, "\x00")
	id, ok := s.stackIDs[key]
	if !ok {
		id = len(s.out.Stacks)
		s.out.Stacks = append(s.out.Stacks, Stack{Reason: why, Frames: frames})
		s.stackIDs[key] = id
	}
	s.stackOf[stk] = id
	return id
}

// ParseMembers decodes the message that k6labels logs in a request task (a
// W3C baggage value of k6 members) into pprof labels by name. Members that
// make no label are skipped.
func ParseMembers(msg string) map[string]string {
	out := map[string]string{}
	for _, m := range strings.Split(msg, ",") {
		k, v, ok := strings.Cut(m, "=")
		if !ok {
			continue
		}
		name, ok := k6labels.LabelName(strings.TrimSpace(k))
		if !ok {
			continue
		}
		if d, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = d
		}
		out[name] = v
	}
	return out
}
