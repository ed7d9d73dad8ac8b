package org.apache.kafka.common.record.internal;

/**
 * Makes this package exist when the oracle builds against Kafka releases before 4.4 (which have
 * no record.internal), so Oracle can import it on demand and compile against every release.
 */
final class PackageAnchor {
    private PackageAnchor() {}
}
