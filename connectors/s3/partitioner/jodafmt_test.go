package partitioner

import (
	"testing"
	"time"
)

// TestJodaFormat pins what Joda's DateTimeFormat.forPattern(p).print
// gives for each supported letter.
func TestJodaFormat(t *testing.T) {
	la, err := loadZone("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	utc, _ := loadZone("UTC")
	kolkata, _ := loadZone("+05:30")
	// 2024-12-30T15:04:05.067Z is a Monday in ISO week 1 of 2025.
	mon := time.UnixMilli(1735571045067)
	cases := []struct {
		pattern string
		z       *zone
		at      time.Time
		want    string
		why     string
	}{
		{"'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", utc, mon, "year=2024/month=12/day=30/hour=15", "quoted literals, padded fields"},
		{"'year'=YYYY/'month'=M/'day'=d/'hour'=H", utc, time.UnixMilli(1704070800000), "year=2024/month=1/day=1/hour=1", "single letters do not pad"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSZZ", la, mon, "2024-12-30T07:04:05.067-08:00", "ZZ prints the offset with a colon"},
		{"HHmmssZ", la, mon, "070405-0800", "Z prints it without"},
		{"HH:mm ZZZ", la, mon, "07:04 America/Los_Angeles", "ZZZ prints the zone id"},
		{"ZZ ZZZ Z", utc, mon, "+00:00 UTC +0000", "Joda prints no Z for zero when printing"},
		{"ZZZ", kolkata, mon, "+05:30", "a fixed zone's id is its offset"},
		{"xxxx-'W'ww-e", utc, mon, "2025-W01-1", "ISO week year, week and day of week"},
		{"xx YY yy", utc, mon, "25 24 24", "two-digit years"},
		{"Y YYYYYY y", utc, mon, "2024 002024 2024", "at least n digits"},
		{"D DDD", utc, mon, "365 365", "day of year"},
		{"EEE EEEE MMM MMMM a G", utc, mon, "Mon Monday Dec December PM AD", "English names"},
		{"h K k", utc, time.UnixMilli(0), "12 0 24", "clock hours at midnight"},
		{"hh KK kk HH", utc, time.UnixMilli(13 * 3600_000), "01 01 13 13", "clock hours after noon"},
		{"C CC", utc, mon, "20 20", "century of era"},
		{"S SS SSS SSSS", utc, mon, "0 06 067 0670", "fraction of second truncates and extends"},
		{"'it''s' '' a'b", utc, mon, "it's ' PMb", "two quotes are a quote, inside or outside quotes"},
		{"'unterminated", utc, mon, "unterminated", "an open quote runs to the end"},
		{"-_/: é", utc, mon, "-_/: é", "other characters are literal"},
		{"yyyy YYYY G", utc, time.Date(-5, 6, 1, 0, 0, 0, 0, time.UTC), "-0005 0006 BC", "year, year of era and era before year 1"},
	}
	for _, c := range cases {
		f, err := compileFormat(c.pattern)
		if err != nil {
			t.Errorf("%s: %v", c.pattern, err)
			continue
		}
		if got := string(f.appendTo(nil, c.at.In(c.z.loc), c.z.id)); got != c.want {
			t.Errorf("%s (%s): %q, want %q", c.pattern, c.why, got, c.want)
		}
	}
}

func TestJodaFormatErrors(t *testing.T) {
	cases := map[string]string{
		"":            "Invalid pattern specification",
		"YYYY/qq":     "Illegal pattern component: qq",
		"year=YYYY":   "Illegal pattern component: r",
		"'x'=YYYY/bb": "Illegal pattern component: bb",
	}
	for p, want := range cases {
		if _, err := compileFormat(p); err == nil || err.Error() != want {
			t.Errorf("compileFormat(%q) error %v, want %q", p, err, want)
		}
	}
	if _, err := compileFormat("HH z"); err == nil {
		t.Error("z compiled")
	}
	for _, p := range []string{"MMM", "EEE", "a", "G"} {
		f, err := compileFormat(p)
		if err != nil || !f.text {
			t.Errorf("%q: text = %v, %v", p, f != nil && f.text, err)
		}
	}
	if f, _ := compileFormat("'May' MM e"); f.text {
		t.Error("quoted letters and numbers count as text")
	}
}
