// Package all registers every converter of this repository with
// connect/plugins; a binary imports it for its side effects:
//
//	import _ "github.com/fjordhq/fjord/converters/all"
package all

import (
	// Each registers its Kafka class names and aliases from init().
	_ "github.com/fjordhq/fjord/converters/bytearray"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	_ "github.com/fjordhq/fjord/converters/number"
	_ "github.com/fjordhq/fjord/converters/str"
)
