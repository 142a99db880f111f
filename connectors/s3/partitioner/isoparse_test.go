package partitioner

import (
	"math"
	"strings"
	"testing"
)

// TestParseTimestampString pins what RecordFieldTimestampExtractor's
// extractTimestampFromString returns (ms digits, or Joda's
// ISODateTimeFormat.dateTimeParser in a UTC JVM). Expected instants were
// computed apart from this code (Python's datetime).
func TestParseTimestampString(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"1427961600000", 1427961600000},
		{"-1", -1},
		{"0", 0},
		{"9223372036854775807", math.MaxInt64},  // testRecordFieldTimeAsMillisMaxValue...
		{"-9223372036854775808", math.MinInt64}, // testRecordFieldTimeAsMillisMinValue...
		{"2015-04-02T01:00:00.000-07:00", 1427961600000},
		{"2015-04-02T01:00:00-07:00", 1427961600000},
		{"2015-04-02T08:00:00Z", 1427961600000},
		{"2015-04-02t08:00:00z", 1427961600000}, // Joda's literals match either case
		{"2015-04-02T08:00Z", 1427961600000},
		{"2015-04-02T08Z", 1427961600000},
		{"2015-04-02T08", 1427961600000},
		{"2015-04-02", 1427932800000},
		{"2015-04", 1427846400000},
		{"2015", 2015},                // digits only: epoch ms, not a year
		{"2015-4-2", 1427932800000},   // numbers take 1 to 2 digits
		{"2015-092", 1427932800000},   // ordinal date
		{"2015-W14-4", 1427932800000}, // week date: 2015-04-02 is Thursday of week 14
		{"2015-W14", 1427673600000},   // Monday of week 14
		{"2015-04-02T10:30:00.123+05:30", 1427950800123},
		{"2015-04-02T10:30:00,123+0530", 1427950800123},
		{"2015-04-02T05:00:00.123456789Z", 1427950800123},
		{"2015-04-02T10.5Z", 1427970600000},    // fraction of the hour: 10:30
		{"2015-04-02T10:30.5Z", 1427970630000}, // fraction of the minute: 10:30:30
		{"T10:30Z", 37800000},                  // time only: 1970-01-01
		{"2015-04-02T", 1427932800000},
		{"2015-04-02TZ", 1427932800000},
		{"2015-04-02T08:00:00+01", 1427958000000},
		{"2015-04-02T08:00:00-00:30:15.5", 1427963415500},
		{"+2015-04-02", 1427932800000},
	}
	for _, c := range cases {
		got, err := parseTimestampString(c.in)
		if err != nil || got != c.want {
			t.Errorf("%q: %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseTimestampStringErrors(t *testing.T) {
	cases := map[string]string{
		"def":                       `Invalid format: "def"`,
		"":                          `Invalid format: ""`,
		"2015-04-02X":               `Invalid format: "2015-04-02X" is malformed at "X"`,
		"2015-02-30":                `Cannot parse "2015-02-30": Value 30 for dayOfMonth must be in the range [1,28]`,
		"2015-13-01":                `Cannot parse "2015-13-01": Value 13 for monthOfYear must be in the range [1,12]`,
		"2015-366":                  `Cannot parse "2015-366": Value 366 for dayOfYear must be in the range [1,365]`,
		"2015-W54":                  `Cannot parse "2015-W54": Value 54 for weekOfWeekyear must be in the range [1,53]`,
		"2015-04-02T24:00":          `Cannot parse "2015-04-02T24:00": Value 24 for hourOfDay must be in the range [0,23]`,
		"2015-04-02T10:60":          `Cannot parse "2015-04-02T10:60": Value 60 for minuteOfHour must be in the range [0,59]`,
		"2015-04-02T10:30:00+05:3":  `Invalid format: "2015-04-02T10:30:00+05:3" is malformed at "+05:3"`,
		"2015-04-02T10:30:00+24:00": `Invalid format: "2015-04-02T10:30:00+24:00" is malformed at "+24:00"`,
		"2015-04-02T10:30:00.":      `Invalid format: "2015-04-02T10:30:00." is malformed at "."`,
		"9223372036854775808":       `Invalid format: "9223372036854775808" is malformed at "6854775808"`,
	}
	for in, want := range cases {
		_, err := parseTimestampString(in)
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "Invalid format") && !strings.HasPrefix(err.Error(), "Cannot parse") {
			t.Errorf("%q: %v is not Joda's kind of message", in, err)
		}
	}
}
