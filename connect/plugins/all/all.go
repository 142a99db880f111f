// Package all registers every Connect plugin Fjord ships — converters,
// transformations and predicates, connectors — with connect/plugins. The
// fjord binary imports it for its side effects:
//
//	import _ "github.com/fjordhq/fjord/connect/plugins/all"
package all

import (
	_ "github.com/fjordhq/fjord/connectors/datagen"
	_ "github.com/fjordhq/fjord/connectors/file"
	_ "github.com/fjordhq/fjord/connectors/nullsink"
	_ "github.com/fjordhq/fjord/connectors/postgres/cdc"
	_ "github.com/fjordhq/fjord/connectors/postgres/sink"
	_ "github.com/fjordhq/fjord/connectors/s3/sink"
	_ "github.com/fjordhq/fjord/connectors/s3/source"
	_ "github.com/fjordhq/fjord/converters/all"
	_ "github.com/fjordhq/fjord/converters/avro"
	_ "github.com/fjordhq/fjord/mirror/checkpoint"
	_ "github.com/fjordhq/fjord/mirror/heartbeat"
	_ "github.com/fjordhq/fjord/mirror/source"
	_ "github.com/fjordhq/fjord/transforms"
)
