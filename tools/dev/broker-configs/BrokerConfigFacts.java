// Prints the facts of Kafka's broker configuration that a controller's DescribeConfigs of its
// own BROKER resource depends on, one per line (gen.py merges every release's into a Rust table). Run against a Kafka release's
// jars: it reads that release's KafkaConfig ConfigDef and DynamicBrokerConfig sets; nothing of
// Kafka is copied, only the names, types, defaults and flags it reports.
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.common.config.ConfigDef;

public class BrokerConfigFacts {
    static Object call(Object target, String name, Class<?>[] types, Object... args) throws Exception {
        Method m = target.getClass().getDeclaredMethod(name, types);
        m.setAccessible(true);
        return m.invoke(target, args);
    }

    static Object get(Object target, String name) throws Exception {
        return call(target, name, new Class<?>[0]);
    }

    // Kafka up to 4.2 keeps these sets in Scala objects, 4.3 on in Java classes.
    static boolean contains(Object set, String name) throws Exception {
        if (set instanceof java.util.Set) return ((java.util.Set<?>) set).contains(name);
        Method m = set.getClass().getMethod("contains", Object.class);
        return (Boolean) m.invoke(set, name);
    }

    static List<String> sorted(Object set) throws Exception {
        List<String> out = new ArrayList<>();
        if (set instanceof java.util.Set) {
            for (Object o : (java.util.Set<?>) set) out.add((String) o);
        } else {
            Object it = set.getClass().getMethod("iterator").invoke(set);
            Method hasNext = it.getClass().getMethod("hasNext");
            Method next = it.getClass().getMethod("next");
            hasNext.setAccessible(true);
            next.setAccessible(true);
            while ((Boolean) hasNext.invoke(it)) out.add((String) next.invoke(it));
        }
        java.util.Collections.sort(out);
        return out;
    }

    static Object staticField(Class<?> c, String name) throws Exception {
        java.lang.reflect.Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(null);
    }

    static Object staticCall(Class<?> c, String name) throws Exception {
        Method m = c.getDeclaredMethod(name);
        m.setAccessible(true);
        return m.invoke(null);
    }

    static String kind(ConfigDef.Type t) {
        switch (t) {
            case BOOLEAN: return "Boolean";
            case STRING: return "String";
            case INT: return "Int";
            case SHORT: return "Short";
            case LONG: return "Long";
            case DOUBLE: return "Double";
            case LIST: return "List";
            case CLASS: return "Class";
            case PASSWORD: return "Password";
            default: throw new IllegalStateException("type " + t);
        }
    }

    // Prints one fact per line, tab-separated, for gen.py to merge across releases:
    //   version <kafka version> <java version>
    //   key <name> <kind> <default or \N> <flags, comma-separated or ->
    //   dynamic-only <name> <kind>
    //   cluster-level-listener <name>
    //   listener-mechanism <name>
    public static void main(String[] args) throws Exception {
        Class<?> kc = Class.forName("kafka.server.KafkaConfig$");
        Object kafkaConfig = kc.getField("MODULE$").get(null);
        ConfigDef def = (ConfigDef) get(kafkaConfig, "configDef");
        Object allDynamic, perBroker, security, clusterLevelListener, mechanism, nonDynamic;
        Map<String, ConfigDef.ConfigKey> dynamicOnly;
        Class<?> javaDyn = null;
        try {
            javaDyn = Class.forName("org.apache.kafka.server.config.DynamicBrokerConfig");
        } catch (ClassNotFoundException e) {
            // Kafka up to 4.2: Scala objects.
        }
        if (javaDyn != null) {
            allDynamic = staticField(javaDyn, "ALL_DYNAMIC_CONFIGS");
            perBroker = staticField(javaDyn, "PER_BROKER_CONFIGS");
            security = staticField(javaDyn, "DYNAMIC_SECURITY_CONFIGS");
            clusterLevelListener = staticField(javaDyn, "CLUSTER_LEVEL_LISTENER_CONFIGS");
            mechanism = staticField(javaDyn, "LISTENER_MECHANISM_CONFIGS");
            Class<?> broker = Class.forName("org.apache.kafka.server.config.DynamicConfig$Broker");
            nonDynamic = staticCall(broker, "nonDynamicProps");
            @SuppressWarnings("unchecked")
            Map<String, ConfigDef.ConfigKey> m = (Map<String, ConfigDef.ConfigKey>) staticCall(broker, "configKeys");
            dynamicOnly = m;
        } else {
            Class<?> dc = Class.forName("kafka.server.DynamicBrokerConfig$");
            Object dyn = dc.getField("MODULE$").get(null);
            allDynamic = get(dyn, "AllDynamicConfigs");
            perBroker = get(dyn, "PerBrokerConfigs");
            security = get(dyn, "DynamicSecurityConfigs");
            clusterLevelListener = get(dyn, "ClusterLevelListenerConfigs");
            mechanism = get(dyn, "ListenerMechanismConfigs");
            Class<?> bc = Class.forName("kafka.server.DynamicConfig$Broker$");
            Object broker = bc.getField("MODULE$").get(null);
            nonDynamic = get(broker, "nonDynamicProps");
            @SuppressWarnings("unchecked")
            Map<String, ConfigDef.ConfigKey> m = (Map<String, ConfigDef.ConfigKey>) get(broker, "configKeys");
            dynamicOnly = m;
        }

        Map<String, ConfigDef.ConfigKey> keys = new TreeMap<>(def.configKeys());
        // The release is gen.sh's argument (AppInfoParser moved in 4.4).
        System.out.println("version\t" + args[0] + "\t" + System.getProperty("java.version"));
        for (Map.Entry<String, ConfigDef.ConfigKey> e : keys.entrySet()) {
            String name = e.getKey();
            ConfigDef.ConfigKey k = e.getValue();
            Object d = k.defaultValue;
            String dflt = (d == null || d == ConfigDef.NO_DEFAULT_VALUE)
                ? "\\N"
                : ConfigDef.convertToString(d, k.type);
            List<String> flags = new ArrayList<>();
            if (k.internalConfig) flags.add("INTERNAL");
            if (contains(allDynamic, name)) flags.add("DYNAMIC");
            if (contains(perBroker, name)) flags.add("PER_BROKER");
            if (contains(security, name)) flags.add("SECURITY");
            if (contains(nonDynamic, name)) flags.add("NON_DYNAMIC");
            System.out.println("key\t" + name + "\t" + kind(k.type) + "\t" + dflt + "\t"
                + (flags.isEmpty() ? "-" : String.join(",", flags)));
        }
        for (Map.Entry<String, ConfigDef.ConfigKey> e : new TreeMap<>(dynamicOnly).entrySet()) {
            if (keys.containsKey(e.getKey())) continue;
            System.out.println("dynamic-only\t" + e.getKey() + "\t" + kind(e.getValue().type));
        }
        for (String s : sorted(clusterLevelListener)) System.out.println("cluster-level-listener\t" + s);
        for (String s : sorted(mechanism)) System.out.println("listener-mechanism\t" + s);
    }
}
