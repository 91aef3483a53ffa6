package watch

import (
	"strings"
	"testing"
)

func drain(t *testing.T, s *Subscription) []Event {
	t.Helper()
	var all []Event
	for {
		evs, wait := s.Next(3)
		if wait != nil {
			return all
		}
		all = append(all, evs...)
	}
}

func TestOrderAndResume(t *testing.T) {
	h := NewHub(Options{History: 10})
	for i := range 5 {
		h.Publish(Event{Kind: KindOutput, Text: string(rune('a' + i))})
	}
	s := h.Subscribe(0)
	defer s.Close()
	got := drain(t, s)
	if len(got) != 5 {
		t.Fatalf("got %d events, want 5", len(got))
	}
	for i, e := range got {
		if e.ID != uint64(i+1) || e.Text != string(rune('a'+i)) {
			t.Errorf("event %d = %d %q", i, e.ID, e.Text)
		}
	}
	// Resuming after event 3 gives 4 and 5 only.
	r := h.Subscribe(3)
	defer r.Close()
	got = drain(t, r)
	if len(got) != 2 || got[0].ID != 4 || got[1].ID != 5 {
		t.Errorf("resume after 3 = %+v", got)
	}
	// A caught-up subscriber waits, and is woken by the next event.
	_, wait := s.Next(10)
	if wait == nil {
		t.Fatal("no wait channel when caught up")
	}
	h.Publish(Event{Kind: KindOutput, Text: "f"})
	<-wait
	if got := drain(t, s); len(got) != 1 || got[0].Text != "f" {
		t.Errorf("after wake = %+v", got)
	}
}

func TestSlowSubscriberLosesOldest(t *testing.T) {
	h := NewHub(Options{History: 4})
	slow := h.Subscribe(0)
	defer slow.Close()
	for i := range 10 { // never blocks, though nobody reads
		h.Publish(Event{Kind: KindOutput, Text: string(rune('0' + i))})
	}
	got := drain(t, slow)
	if len(got) != 5 || got[0].Kind != KindDropped || got[0].Count != 6 {
		t.Fatalf("slow subscriber got %+v, want a dropped(6) then the last 4", got)
	}
	var texts []string
	for _, e := range got[1:] {
		texts = append(texts, e.Text)
	}
	if strings.Join(texts, "") != "6789" {
		t.Errorf("kept %q, want the newest 6789", texts)
	}
	// Resuming from an id pushed out of the ring says what was lost.
	r := h.Subscribe(2)
	defer r.Close()
	if got := drain(t, r); got[0].Kind != KindDropped || got[0].Count != 4 || got[1].ID != 7 {
		t.Errorf("resume from a lost id = %+v", got)
	}
}

func TestWatchingAndRedaction(t *testing.T) {
	h := NewHub(Options{Redact: "s3cret"})
	if h.Watching() {
		t.Fatal("watching with no subscriber")
	}
	s := h.Subscribe(0)
	if !h.Watching() {
		t.Fatal("not watching with a subscriber")
	}
	h.Publish(Event{Kind: KindCall, Args: "curl -H 'Authorization: Bearer s3cret'"})
	if got := drain(t, s); strings.Contains(got[0].Args, "s3cret") || !strings.Contains(got[0].Args, "[token]") {
		t.Errorf("args = %q", got[0].Args)
	}
	s.Close()
	s.Close()
	if h.Watching() {
		t.Fatal("watching after close")
	}
}

func TestOutputNotGatheredUnwatched(t *testing.T) {
	h := NewHub(Options{})
	o := &output{hub: h, call: 1}
	o.write(0, []byte("hello\n"))
	o.close()
	s := h.Subscribe(0)
	defer s.Close()
	if got := drain(t, s); len(got) != 0 {
		t.Errorf("unwatched output published: %+v", got)
	}
}

func TestOutputKeepsTailAndWholeCharacters(t *testing.T) {
	h := NewHub(Options{})
	s := h.Subscribe(0)
	defer s.Close()
	o := &output{hub: h, call: 1}
	o.write(1, []byte(strings.Repeat("x", maxChunk)+"END\n"))
	o.write(0, []byte("é"[:1]))
	o.flush(false) // the half character waits
	o.write(0, []byte("é"[1:]))
	o.close()
	got := drain(t, s)
	var out, errs string
	for _, e := range got {
		switch e.Stream {
		case "stdout":
			out += e.Text
		case "stderr":
			errs += e.Text
		}
	}
	if out != "é" {
		t.Errorf("stdout = %q", out)
	}
	if !strings.HasPrefix(errs, "[… 4 bytes skipped …]\n") || !strings.HasSuffix(errs, "END\n") {
		t.Errorf("stderr head %q tail %q", errs[:30], errs[len(errs)-10:])
	}
}

func TestDiff(t *testing.T) {
	got := Diff("a.go", Hunk{Old: "one\ntwo\nthree\n", New: "one\n2\nthree\n"})
	want := "--- a.go\n+++ a.go\n@@\n one\n-two\n+2\n three\n"
	if got != want {
		t.Errorf("Diff =\n%s\nwant\n%s", got, want)
	}
}
