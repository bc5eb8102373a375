package htmlreport

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// A node is one frame of a flame graph: a function called by its parent's
// function, with the CPU of the samples whose stacks pass through it, in
// the graph's unit, in the base profile (before) and the other (after).
type node struct {
	name          string
	before, after float64
	kids          map[string]*node
}

func (n *node) child(name string) *node {
	c := n.kids[name]
	if c == nil {
		if n.kids == nil {
			n.kids = map[string]*node{}
		}
		c = &node{name: name}
		n.kids[name] = c
	}
	return c
}

// add adds the CPU of p's samples, times scale, to the tree rooted at n:
// to before when base, else to after. Inlined frames are frames of their
// own, as pprof shows them.
func (n *node) add(p *profile.Profile, scale float64, base bool) {
	ci := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool {
		return st.Type == "cpu" && st.Unit == "nanoseconds"
	})
	if ci < 0 {
		ci = len(p.SampleType) - 1
	}
	if ci < 0 {
		return
	}
	for _, s := range p.Sample {
		v := float64(s.Value[ci]) * scale
		if v == 0 {
			continue
		}
		cur := n
		bump := func(c *node) {
			if base {
				c.before += v
			} else {
				c.after += v
			}
		}
		bump(cur)
		for i := len(s.Location) - 1; i >= 0; i-- {
			loc := s.Location[i]
			if len(loc.Line) == 0 {
				cur = cur.child(fmt.Sprintf("0x%x", loc.Address))
				bump(cur)
				continue
			}
			for j := len(loc.Line) - 1; j >= 0; j-- {
				name := "(unknown)"
				if f := loc.Line[j].Function; f != nil {
					name = f.Name
				}
				cur = cur.child(name)
				bump(cur)
			}
		}
	}
}

// A frame is a laid-out node: it spans [X0, X1) of the graph's width
// (fractions of the root's width) at row Depth.
type frame struct {
	Name          string
	Depth         int
	X0, X1        float64
	Before, After float64
}

// layout returns the frames of the tree rooted at root, widths by after
// (by before when after is all zero), leaving out frames narrower than
// minFrac of the root and those deeper than maxDepth. Children are ordered
// by name, as in pprof's and Pyroscope's flame graphs.
func layout(root *node, minFrac float64, maxDepth int) []frame {
	width := func(n *node) float64 { return n.after }
	if root.after == 0 {
		width = func(n *node) float64 { return n.before }
	}
	total := width(root)
	if total <= 0 {
		return nil
	}
	var out []frame
	var walk func(n *node, depth int, x0 float64)
	walk = func(n *node, depth int, x0 float64) {
		w := width(n) / total
		out = append(out, frame{Name: n.name, Depth: depth, X0: x0, X1: x0 + w, Before: n.before, After: n.after})
		if depth >= maxDepth {
			return
		}
		kids := make([]*node, 0, len(n.kids))
		for _, k := range n.kids {
			kids = append(kids, k)
		}
		slices.SortFunc(kids, func(a, b *node) int { return cmp.Compare(a.name, b.name) })
		x := x0
		for _, k := range kids {
			kw := width(k) / total
			if kw >= minFrac {
				walk(k, depth+1, x)
			}
			x += kw
		}
	}
	walk(root, 0, 0)
	return out
}

// A graph is a flame graph ready to draw.
type graph struct {
	ID     string // element id of the svg; "" for none
	Title  string // the root frame's label
	Unit   string // unit of Before and After in tooltips: "ms/request", "s", "of k6 CPU"
	Diff   bool   // colour by after − before; else by package
	Frames []frame
	// Sat is the change (after − before, in Unit) that gets the fullest
	// red or blue in a diff graph.
	Sat float64
}

// newGraph builds a graph of before and after (either may be nil) scaled
// by their factors; minFrac and maxDepth prune it (see layout).
func newGraph(title, unit string, diff bool, before *profile.Profile, sb float64, after *profile.Profile, sa float64, minFrac float64, maxDepth int) *graph {
	root := &node{name: title}
	if before != nil {
		root.add(before, sb, true)
	}
	if after != nil {
		root.add(after, sa, false)
	}
	g := &graph{Title: title, Unit: unit, Diff: diff, Frames: layout(root, minFrac, maxDepth)}
	// Bound the page's size whatever the profile: leave out more of the
	// narrowest frames until few enough remain.
	for len(g.Frames) > maxFrames {
		minFrac = max(2*minFrac, 1e-4)
		g.Frames = layout(root, minFrac, maxDepth)
	}
	if diff {
		// Full colour at the largest change of any frame below the root,
		// but at least 2% of the root's CPU before: a row that did not
		// change stays pale instead of showing its noise at full colour.
		g.Sat = 0.02 * math.Max(root.before, root.after)
		for _, f := range g.Frames[min(1, len(g.Frames)):] {
			g.Sat = math.Max(g.Sat, math.Abs(f.After-f.Before))
		}
	}
	return g
}

// maxFrames bounds the frames of one graph (about 300 bytes each).
var maxFrames = 3000

// Drawing constants of the svg, in px.
const (
	rowHeight = 16
	charWidth = 6.6 // of the 11px monospace font the labels use
	pad       = 4
)

// label returns name shortened to fit a frame w px wide, "" if nothing fits.
func label(name string, w float64) string {
	n := int((w - 2*pad) / charWidth)
	switch {
	case n < 3:
		return ""
	case utf8.RuneCountInString(name) <= n:
		return name
	}
	r := []rune(name)
	return string(r[:n-1]) + "…"
}

// colour returns the fill of a frame.
func (g *graph) colour(f frame) string {
	if !g.Diff {
		// Warm colours by package, as pprof's and Brendan Gregg's flame
		// graphs: one package, one colour.
		pkg := f.Name
		if i := strings.LastIndex(pkg, "/"); i >= 0 {
			pkg = pkg[i+1:]
		}
		if i := strings.Index(pkg, "."); i >= 0 {
			pkg = pkg[:i]
		}
		h := fnv.New32a()
		h.Write([]byte(pkg))
		v := h.Sum32()
		return fmt.Sprintf("hsl(%d,%d%%,%d%%)", 10+v%40, 65+(v>>8)%25, 55+(v>>16)%15)
	}
	t := 0.0
	if g.Sat > 0 {
		t = math.Max(-1, math.Min(1, (f.After-f.Before)/g.Sat))
	}
	// Grey at no change, red where the frame grew, blue where it shrank.
	if math.Abs(t) < 0.01 {
		return neutral
	}
	c := int(math.Round(235 - 170*math.Abs(t)))
	if t >= 0 {
		return fmt.Sprintf("rgb(250,%d,%d)", c, c)
	}
	return fmt.Sprintf("rgb(%d,%d,250)", c, c)
}

func (g *graph) fmtValue(v float64) string {
	switch g.Unit {
	case "s":
		return fmt.Sprintf("%.2fs", v)
	case unitShare:
		return fmt.Sprintf("%.2f%% of k6 CPU", 100*v)
	}
	return fmt.Sprintf("%.4f %s", v, g.Unit)
}

// tooltip is a frame's <title>: its name and CPU (both sides and the
// change in a diff).
func (g *graph) tooltip(f frame) string {
	if !g.Diff {
		return fmt.Sprintf("%s\n%s, %.1f%% of the graph", f.Name, g.fmtValue(f.After), 100*(f.X1-f.X0))
	}
	change := "new"
	if f.Before > 0 {
		change = fmt.Sprintf("%+.1f%%", 100*(f.After/f.Before-1))
	}
	return fmt.Sprintf("%s\nbefore %s\nafter %s (%s)", f.Name, g.fmtValue(f.Before), g.fmtValue(f.After), change)
}

// neutral is the colour of a diff frame that did not change.
const neutral = "rgb(235,235,235)"

// unitShare is the unit of diffs without k6 results.
const unitShare = "share"

// writeSVG draws g width px wide. Interactive graphs carry the data the
// page's script zooms with (data-x0, data-x1, data-d on each frame).
func (g *graph) writeSVG(w io.Writer, width int, interactive bool) error {
	depth := 0
	for _, f := range g.Frames {
		depth = max(depth, f.Depth)
	}
	height := (depth+1)*rowHeight + 2
	legend := !interactive && g.Diff
	if legend {
		height += rowHeight + 4
	}
	var b strings.Builder
	id := ""
	if g.ID != "" {
		id = fmt.Sprintf(` id="%s"`, html.EscapeString(g.ID))
	}
	class := "fg"
	if g.Diff {
		class += " diff"
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg"%s class="%s" width="%d" height="%d" viewBox="0 0 %d %d" data-w="%d" font-family="monospace" font-size="11">`+"\n",
		id, class, width, height, width, height, width)
	if !interactive {
		// Standalone (a pull request comment): its own background, so that
		// a dark theme does not show through.
		fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", width, height)
	}
	for _, f := range g.Frames {
		x, wd := f.X0*float64(width), (f.X1-f.X0)*float64(width)
		y := f.Depth * rowHeight
		name := html.EscapeString(f.Name)
		if interactive {
			fmt.Fprintf(&b, `<g class="f" data-x0="%.6f" data-x1="%.6f" data-d="%d" data-n="%s">`, f.X0, f.X1, f.Depth, name)
		} else {
			b.WriteString("<g>")
		}
		fmt.Fprintf(&b, `<title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" stroke="#fff" stroke-width="0.5"/>`,
			html.EscapeString(g.tooltip(f)), x, y, wd, rowHeight-1, g.colour(f))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text></g>`+"\n", x+pad, y+rowHeight-4, html.EscapeString(label(f.Name, wd)))
	}
	if legend {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#444">width: %s after; colour: change per request, red grew, blue shrank, grey the same (k6labels diff)</text>`+"\n",
			pad, height-6, html.EscapeString(g.Unit))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
