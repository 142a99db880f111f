// A bridge for the capture only: connect-file 4.3.1 (the newest the package
// registry serves) calls org.apache.kafka.common.utils.AppInfoParser, which
// Kafka 4.4 moved to ...utils.internals.
package org.apache.kafka.common.utils;

public final class AppInfoParser {
    private AppInfoParser() { }

    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }

    public static String getCommitId() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId();
    }
}
