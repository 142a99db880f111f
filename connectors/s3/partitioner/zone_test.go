package partitioner

import (
	"testing"
	"time"
)

// TestZone pins which ids Joda's DateTimeZone.forID accepts and the
// offsets fixed zones get.
func TestZone(t *testing.T) {
	ok := []struct {
		id     string
		name   string // Joda's id for the zone
		offset int    // seconds east of UTC on 2024-01-15
	}{
		{"UTC", "UTC", 0},
		{"CET", "CET", 3600}, // PartitionerConfigTest.testValidTimezoneAccepted
		{"America/Los_Angeles", "America/Los_Angeles", -8 * 3600},
		{"Asia/Kolkata", "Asia/Kolkata", 5*3600 + 1800},
		{"+05:30", "+05:30", 5*3600 + 1800},
		{"-0800", "-08:00", -8 * 3600},
		{"+01", "+01:00", 3600},
		{"+01:02:03", "+01:02:03", 3723},
		{"+00:00", "UTC", 0}, // a zero offset is UTC
	}
	jan := time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC)
	for _, c := range ok {
		z, err := loadZone(c.id)
		if err != nil {
			t.Errorf("%q: %v", c.id, err)
			continue
		}
		if _, off := jan.In(z.loc).Zone(); z.id != c.name || off != c.offset {
			t.Errorf("%q: id %q offset %d, want %q %d", c.id, z.id, off, c.name, c.offset)
		}
		if loc, err := Zone(c.id); err != nil || loc != z.loc && loc.String() != z.loc.String() {
			t.Errorf("Zone(%q) = %v, %v", c.id, loc, err)
		}
	}
	for _, id := range []string{"LLL", "utc", "Local", "", "+5", "+24:00", "+05:3", "+05:60", "+05:30x", "America/Nowhere"} {
		if _, err := Zone(id); err == nil || err.Error() != "The datetime zone id '"+id+"' is not recognised" {
			t.Errorf("Zone(%q) error %v", id, err)
		}
	}
}

// TestLocalToUTC pins Joda's convertLocalToUTC(local, false) at the edges
// of DST in both hemispheres' directions.
func TestLocalToUTC(t *testing.T) {
	ms := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMilli()
	}
	cases := []struct {
		zone, local, want, why string
	}{
		{"America/Los_Angeles", "2024-03-10T03:00:00Z", "2024-03-10T10:00:00Z", "just after the gap: PDT"},
		{"America/Los_Angeles", "2024-03-10T02:30:00Z", "2024-03-10T10:30:00Z", "in the gap, west: the pre-gap offset PST"},
		{"America/Los_Angeles", "2024-11-03T01:30:00Z", "2024-11-03T08:30:00Z", "in the overlap: the earlier offset PDT"},
		// East of Greenwich Joda trusts its second estimate, which in a gap
		// is the offset before it (03:30 CEST) and in an overlap the later
		// offset (02:30 CET), unlike the west.
		{"Europe/Paris", "2024-03-31T02:30:00Z", "2024-03-31T01:30:00Z", "in the gap, east: the pre-gap offset CET"},
		{"Europe/Paris", "2024-10-27T02:30:00Z", "2024-10-27T01:30:00Z", "in the overlap, east: the later offset CET"},
		{"UTC", "2024-10-27T02:30:00Z", "2024-10-27T02:30:00Z", "no transitions"},
	}
	for _, c := range cases {
		z, err := loadZone(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		got, err := z.localToUTC(ms(c.local))
		if err != nil || got != ms(c.want) {
			t.Errorf("%s %s (%s): %s, %v; want %s", c.zone, c.local, c.why, time.UnixMilli(got).UTC().Format(time.RFC3339), err, c.want)
		}
	}
}
