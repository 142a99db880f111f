package controller

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// maxTopicNameLength is Kafka's limit: 255 minus room for the partition
// suffix and the deletion marker in directory names.
const maxTopicNameLength = 249

// ValidateTopicName applies Kafka's topic name rules (Topic.validate),
// with Kafka 4.4's messages.
func ValidateTopicName(name string) *Error {
	switch {
	case name == "":
		return errorf(kerr.InvalidTopicException, "Topic name is invalid: the empty string is not allowed")
	case name == "." || name == "..":
		return errorf(kerr.InvalidTopicException, "Topic name is invalid: '%s' is not allowed", name)
	case len(name) > maxTopicNameLength:
		return errorf(kerr.InvalidTopicException, "Topic name is invalid: the length of '%s' is longer than the max allowed length %d", name, maxTopicNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return errorf(kerr.InvalidTopicException, "Topic name is invalid: '%s' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

// collides reports whether two topic names map to the same metric name:
// Kafka forbids topics differing only in '.' versus '_'.
func collides(a, b string) bool {
	return strings.ReplaceAll(a, ".", "_") == strings.ReplaceAll(b, ".", "_")
}
