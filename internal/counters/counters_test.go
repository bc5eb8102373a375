package counters

import (
	"sync"
	"testing"
	"unsafe"
)

// Every goroutine's counts land in the sum, whatever stripe it picked.
func TestSum(t *testing.T) {
	var s Set
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				s.Add(true, 2, 1, true)
				s.Add(false, 0, 0, false) // counts nothing
			}
		}()
	}
	wg.Wait()
	if got, want := s.Sum(), (Totals{1600, 3200, 1600, 1600}); got != want {
		t.Errorf("Sum = %+v, want %+v", got, want)
	}
}

// stripeOf picks a stripe within the Set, and stripes fill whole lines.
func TestStripeLayout(t *testing.T) {
	var s Set
	st := s.stripeOf()
	off := uintptr(unsafe.Pointer(st)) - uintptr(unsafe.Pointer(&s.stripes[0]))
	if off%stripeSize != 0 || off/stripeSize >= Stripes {
		t.Errorf("stripe at offset %d of a Set of %d stripes of %d bytes", off, Stripes, stripeSize)
	}
	if unsafe.Sizeof(s) != Stripes*stripeSize {
		t.Errorf("a Set is %d bytes, want %d", unsafe.Sizeof(s), Stripes*stripeSize)
	}
}
