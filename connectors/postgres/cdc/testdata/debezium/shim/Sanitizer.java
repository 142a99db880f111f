// Kafka 4.4 moved org.apache.kafka.common.utils.Sanitizer to
// org.apache.kafka.common.utils.internals (KAFKA-20297). Debezium 3.6.1 was
// built against Kafka 4.3.0 and still calls the old class to name its JMX
// metrics, so its task dies with NoClassDefFoundError on Kafka Connect 4.4
// (debezium/dbz#2555, fixed in Debezium after 3.6.1). gen.sh puts this
// delegate on Debezium's plugin path; it changes nothing but JMX names.
package org.apache.kafka.common.utils;

public final class Sanitizer {
	private Sanitizer() {
	}

	public static String sanitize(String name) {
		return org.apache.kafka.common.utils.internals.Sanitizer.sanitize(name);
	}

	public static String desanitize(String name) {
		return org.apache.kafka.common.utils.internals.Sanitizer.desanitize(name);
	}

	public static String jmxSanitize(String name) {
		return org.apache.kafka.common.utils.internals.Sanitizer.jmxSanitize(name);
	}
}
