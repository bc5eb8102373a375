package k6labels_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/k6labels/k6labels"
)

func TestMergeBaggage(t *testing.T) {
	const add = "k6.name=GetBike,k6.scenario=default,k6.test_run_id=123"
	tests := []struct {
		name     string
		existing []string
		add      string
		want     string
	}{
		{"nothing", nil, "", ""},
		{"only add", nil, add, add},
		{"only existing", []string{"a=1 , b=2;p=q", "c=3"}, "", "a=1,b=2;p=q,c=3"},
		{"appended after existing", []string{"userId=alice"}, add, "userId=alice," + add},
		{
			"k6 key replaced, not duplicated",
			[]string{"userId=alice, k6.scenario=old, serverNode=DF%2028"}, add,
			"userId=alice,serverNode=DF%2028," + add,
		},
		{
			"several lines, properties and other k6 keys kept",
			[]string{"a=1;ttl=5", "k6.name=old;p", "k6.custom=x, b=2"}, add,
			"a=1;ttl=5,k6.custom=x,b=2," + add,
		},
		{
			"duplicates of other keys are not ours to remove",
			[]string{"a=1,a=2"}, "k6.name=n", "a=1,a=2,k6.name=n",
		},
		{
			"malformed existing members dropped",
			[]string{"garbage, =x, ,, a=1,  ;p"}, "k6.name=n", "a=1,k6.name=n",
		},
		{
			"a key twice in add: last wins",
			[]string{"x=1"}, "k6.name=a,k6.scenario=s,k6.name=b", "x=1,k6.scenario=s,k6.name=b",
		},
		{"empty existing line", []string{""}, "k6.name=n", "k6.name=n"},
		{
			"a k6 key that makes the same label name replaced",
			[]string{"k6.my-tag=a,k6.my.tag=b,k6.my_tags=c,my-tag=d"}, "k6.my_tag=a", "k6.my_tags=c,my-tag=d,k6.my_tag=a",
		},
		{"same label name twice in add: last wins", []string{"x=1"}, "k6.a-b=1,k6.a_b=2", "x=1,k6.a_b=2"},
		{
			"each invalid member dropped on its own, valid ones kept byte for byte",
			[]string{
				"a=1, sp=a b, dq=\"x\", bs=a\\b, ctl=a\x01b, del=a\x7fb, pct=100%, pct1=%4, pcth=%zz",
				"utf8=caf\xc3\xa9, bad key=1, k\"=1, p=1;bad prop=2, q=2;=3, r=3;ok;x=%41, s= 4 ;t ,u=%2C%e9",
			},
			"k6.name=n",
			"a=1,r=3;ok;x=%41,s= 4 ;t,u=%2C%e9,k6.name=n",
		},
		{"an invalid add member dropped", nil, "k6.name=a b,k6.scenario=s", "k6.scenario=s"},
		{
			"an invalid add member replaces nothing",
			[]string{"k6.name=old,a=1"}, "k6.name=a b,k6.scenario=s", "k6.name=old,a=1,k6.scenario=s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := k6labels.MergeBaggage(tt.existing, tt.add); got != tt.want {
				t.Errorf("MergeBaggage(%q, %q)\n got %q\nwant %q", tt.existing, tt.add, got, tt.want)
			}
		})
	}
}

// mergedMembers splits a merged value, which MergeBaggage writes with bare ','.
func mergedMembers(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func TestMergeBaggageMemberLimit(t *testing.T) {
	var existing []string
	for i := range 64 {
		existing = append(existing, "m"+strconv.Itoa(i)+"=v")
	}
	const add = "k6.name=n,k6.scenario=s,k6.test_run_id=1"
	got := mergedMembers(k6labels.MergeBaggage([]string{strings.Join(existing, ", ")}, add))
	if len(got) != k6labels.MaxBaggageMembers {
		t.Fatalf("got %d members, want %d", len(got), k6labels.MaxBaggageMembers)
	}
	// add's members all go through; existing ones keep their order and the
	// last ones give way.
	want := append(existing[:61:61], "k6.name=n", "k6.scenario=s", "k6.test_run_id=1")
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestMergeBaggageByteLimit(t *testing.T) {
	big := func(k string, n int) string { return k + "=" + strings.Repeat("x", n) }
	existing := []string{big("a", 3000), big("b", 3000), big("c", 3000), "d=small"}
	const add = "k6.name=n,k6.scenario=s"
	v := k6labels.MergeBaggage(existing, add)
	if len(v) > k6labels.MaxBaggageBytes {
		t.Fatalf("merged value is %d bytes, over %d", len(v), k6labels.MaxBaggageBytes)
	}
	// The existing lines alone are over the limit: the receiving-side scanner
	// already stops before "c" and "d" (a member cut by the byte limit is not
	// kept), and what is left fits whole with add.
	want := big("a", 3000) + "," + big("b", 3000) + "," + add
	if v != want {
		t.Errorf("got members %.20q, want %.20q", mergedMembers(v), mergedMembers(want))
	}

	// Within the scan limit but not with add: a member that does not fit is
	// dropped whole and later, smaller ones still go in.
	existing = []string{big("a", 4000) + ", " + big("b", 4170) + ", d=small"}
	v = k6labels.MergeBaggage(existing, add)
	want = big("a", 4000) + ",d=small," + add
	if v != want {
		t.Errorf("got members %.20q, want %.20q", mergedMembers(v), mergedMembers(want))
	}
}

func TestMergeBaggageAddOverLimits(t *testing.T) {
	var add []string
	for i := range 70 {
		add = append(add, "k6.m"+strconv.Itoa(i)+"=v")
	}
	got := mergedMembers(k6labels.MergeBaggage([]string{"a=1"}, strings.Join(add, ",")))
	if strings.Join(got, ",") != strings.Join(add[:64], ",") {
		t.Errorf("got %q, want the first 64 of add", got)
	}
	got = mergedMembers(k6labels.MergeBaggage(nil, strings.Join(add, ",")))
	if len(got) != 64 {
		t.Errorf("got %d members with no existing baggage, want 64", len(got))
	}
	long := strings.Repeat("k6.v="+strings.Repeat("y", 2000)+",", 5)
	v := k6labels.MergeBaggage(nil, long)
	if v != "k6.v="+strings.Repeat("y", 2000) {
		t.Errorf("got %d bytes, want the last k6.v only once", len(v))
	}
}

func TestMergeBaggageNoAllocWithoutExisting(t *testing.T) {
	ctx := k6labels.NewLabeler().Context(context.Background(), []string{k6Header})
	add := k6labels.Baggage(ctx)
	if add == "" {
		t.Fatal("no k6 members in the context")
	}
	if n := testing.AllocsPerRun(100, func() { _ = k6labels.MergeBaggage(nil, add) }); n != 0 {
		t.Errorf("MergeBaggage(nil, add) allocates %v times, want 0", n)
	}
}

// FuzzMergeBaggage checks the rules that must hold whatever is sent: the W3C
// limits, members kept whole, and add's keys never sent twice.
func FuzzMergeBaggage(f *testing.F) {
	f.Add("userId=alice, k6.scenario=old;p=1", "k6.name=GetBike,k6.scenario=default", "b=2")
	f.Add("", "k6.name=a,k6.name=b", "")
	f.Add(strings.Repeat("k=v,", 70), "k6.x=1", strings.Repeat("z", 9000))
	f.Fuzz(func(t *testing.T, line1, add, line2 string) {
		v := k6labels.MergeBaggage([]string{line1, line2}, add)
		if len(v) > k6labels.MaxBaggageBytes {
			t.Fatalf("%d bytes", len(v))
		}
		ms := mergedMembers(v)
		if len(ms) > k6labels.MaxBaggageMembers {
			t.Fatalf("%d members", len(ms))
		}
		if v == add {
			return // add passed through as it was
		}
		for _, m := range ms {
			if m == "" || !strings.Contains(line1, m) && !strings.Contains(line2, m) && !strings.Contains(add, m) {
				t.Fatalf("member %q is not one of the inputs' members", m)
			}
		}
		// The keys add really sends: its invalid members are dropped on
		// their own and leave existing's members of that key alone.
		addKeys := map[string]bool{}
		for _, m := range k6labels.ParseBaggage(k6labels.MergeBaggage(nil, add)) {
			addKeys[m.Key] = true
		}
		seen := map[string]bool{}
		for _, m := range k6labels.ParseBaggage(v) {
			if addKeys[m.Key] {
				if seen[m.Key] {
					t.Fatalf("key %q sent twice in %q", m.Key, v)
				}
				seen[m.Key] = true
			}
		}
	})
}

func BenchmarkMergeBaggage(b *testing.B) {
	ctx := k6labels.NewLabeler().Context(context.Background(), []string{k6Header})
	add := k6labels.Baggage(ctx)
	b.Run("NoExisting", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = k6labels.MergeBaggage(nil, add)
		}
	})
	b.Run("Existing", func(b *testing.B) {
		existing := []string{"userId=alice,serverNode=DF%2028,isProduction=false"}
		b.ReportAllocs()
		for b.Loop() {
			_ = k6labels.MergeBaggage(existing, add)
		}
	})
}

// A service that calls others outside net/http (a message queue, a custom
// client) can still pass the k6 members on.
func ExampleMergeBaggage() {
	// The context of a request that came in from k6 through NewHandler.
	ctx := k6labels.NewLabeler().Context(context.Background(),
		[]string{"k6.test_run_id=123, k6.scenario=default, k6.name=GetBike"})

	// Baggage the outgoing message already carries.
	existing := []string{"userId=alice, k6.scenario=stale"}

	fmt.Println(k6labels.MergeBaggage(existing, k6labels.Baggage(ctx)))
	// Output: userId=alice,k6.name=GetBike,k6.scenario=default,k6.test_run_id=123
}
