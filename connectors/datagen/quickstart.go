package datagen

import (
	"slices"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// A quickstart is one of Confluent datagen's ready-made datasets: the same
// schema name, field names, types and value shapes (its Avro schemas'
// arg.properties), and the same default key field. Sequence fields
// (Avro "iteration") count the record's sequence number, which is unique
// across tasks, where Confluent's count per task.
type quickstart struct {
	keyField string
	spec     func() *spec
}

var quickstarts = map[string]quickstart{
	"users":        {"userid", usersSpec},
	"pageviews":    {"viewtime", pageviewsSpec},
	"orders":       {"orderid", ordersSpec},
	"stock_trades": {"symbol", stockTradesSpec},
	"ratings":      {"rating_id", ratingsSpec},
}

func quickstartNames() []string {
	var out []string
	for n := range quickstarts {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Field builders for the quickstart schemas.

func rangeLong(name string, lo, hi int64) *fieldGen {
	return &fieldGen{name: name, typ: connect.Int64, kind: genRange, lo: lo, hi: hi - 1} // Avro range max is exclusive
}

func rangeInt(name string, lo, hi int64) *fieldGen {
	return &fieldGen{name: name, typ: connect.Int32, kind: genRange, lo: lo, hi: hi - 1}
}

func rangeDouble(name string, lo, hi float64) *fieldGen {
	return &fieldGen{name: name, typ: connect.Float64, kind: genRange, flo: lo, fhi: hi}
}

func options(name string, values ...string) *fieldGen {
	f := &fieldGen{name: name, typ: connect.String, kind: genOptions}
	for _, v := range values {
		f.options = append(f.options, v)
	}
	return f
}

// digits is the regex prefix[1-9] repeated between min and max times
// (with extra digits [0-9] after the first when rest is set, as
// Item_[1-9][0-9]{0,2}).
func digits(name, prefix string, minN, maxN int, rest bool) *fieldGen {
	return &fieldGen{name: name, typ: connect.String, kind: genFunc, fn: func(r *rng, _ int64, a *arena) any {
		a.grow(len(prefix) + maxN + 1)
		start := len(a.buf)
		a.buf = append(a.buf, prefix...)
		if rest {
			a.buf = append(a.buf, byte('1'+r.intn(9)))
		}
		n := minN + int(r.intn(uint64(maxN-minN+1)))
		for range n {
			if rest {
				a.buf = append(a.buf, byte('0'+r.intn(10)))
			} else {
				a.buf = append(a.buf, byte('1'+r.intn(9)))
			}
		}
		return a.str(start)
	}}
}

// iteration is Avro's "iteration": start + step × sequence number.
func iteration(name string, t connect.Type, start, step int64) *fieldGen {
	return &fieldGen{name: name, typ: t, kind: genFunc, fn: func(_ *rng, seq int64, _ *arena) any {
		return castInt(t, start+step*seq)
	}}
}

func structSpec(name, doc string, fields ...*fieldGen) *spec {
	b := connect.NewStruct().Name(name)
	if doc != "" {
		b.Doc(doc)
	}
	for _, f := range fields {
		b.Field(f.name, fieldSchema(f))
	}
	return &spec{schema: b.Build(), fields: fields, struct_: true}
}

func withDoc(f *fieldGen, doc string) *fieldGen {
	f.doc = doc
	return f
}

func usersSpec() *spec {
	return structSpec("ksql.users", "",
		rangeLong("registertime", 1487715775521, 1519273364600),
		digits("userid", "User_", 1, 1, false),
		digits("regionid", "Region_", 1, 1, false),
		options("gender", "MALE", "FEMALE", "OTHER"))
}

func pageviewsSpec() *spec {
	return structSpec("ksql.pageviews", "",
		iteration("viewtime", connect.Int64, 1, 10),
		digits("userid", "User_", 1, 1, false),
		digits("pageid", "Page_", 1, 1, true))
}

func ordersSpec() *spec {
	address := structSpec("ksql.address", "",
		digits("city", "City_", 0, 2, false),
		digits("state", "State_", 0, 2, false),
		rangeLong("zipcode", 10000, 99999))
	return structSpec("ksql.orders", "",
		rangeLong("ordertime", 1487715775521, 1519273364600),
		iteration("orderid", connect.Int32, 0, 1),
		digits("itemid", "Item_", 0, 2, true),
		rangeDouble("orderunits", 0.1, 10.0),
		&fieldGen{name: "address", typ: connect.StructType, kind: genStruct, sub: address})
}

func stockTradesSpec() *spec {
	return structSpec("ksql.StockTrade", "Defines a hypothetical stock trade using some known test stock symbols.",
		withDoc(options("side", "BUY", "SELL"), "A simulated trade side (buy or sell or short)"),
		withDoc(rangeInt("quantity", 1, 5000), "A simulated random quantity of the trade"),
		withDoc(options("symbol", "ZBZX", "ZJZZT", "ZTEST", "ZVV", "ZVZZT", "ZWZZT", "ZXZZT"), "Simulated stock symbols"),
		withDoc(rangeInt("price", 5, 1000), "A simulated random trade price in pennies"),
		withDoc(options("account", "ABC123", "LMN456", "XYZ789"), "Simulated accounts assigned to the trade"),
		withDoc(digits("userid", "User_", 1, 1, false), "The simulated user who executed the trade"))
}

func ratingsSpec() *spec {
	return structSpec("ksql.ratings", "",
		iteration("rating_id", connect.Int64, 1, 1),
		rangeInt("user_id", -1, 20),
		rangeInt("stars", 1, 5),
		rangeInt("route_id", 1, 9999),
		iteration("rating_time", connect.Int64, 1, 12),
		options("channel", "web", "iOS", "ios", "iOS-test", "android"),
		options("message",
			"worst. flight. ever. #neveragain",
			"Surprisingly good, maybe you are getting your mojo back at long last!",
			"Exceeded all my expectations. Thank you !",
			"meh",
			"(expletive deleted)",
			"is this as good as it gets? really ?",
			"airport refurb looks great, will fly outta here more!",
			"why is it so difficult to keep the bathrooms clean ?",
			"thank you for the most friendly, helpful experience today at your new lounge",
			"more peanuts please",
			"your team here rocks!"))
}

// quickstartList is the validator message's list.
func quickstartList() string { return strings.Join(quickstartNames(), ",") }
