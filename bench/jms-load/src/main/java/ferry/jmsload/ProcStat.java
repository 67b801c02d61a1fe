package ferry.jmsload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Readings of /proc taken at both ends of the measured window: the broker's CPU time
 * (utime + stime of /proc/PID/stat) and the machine's steal time (/proc/stat).
 */
final class ProcStat {
    /** Clock ticks per second of /proc's counters (USER_HZ; 100 on Linux unless overridden). */
    static final long TICKS_PER_SEC = Long.getLong("ferry.jmsload.clkTck", 100L);

    /** One reading; -1 fields where /proc could not be read. */
    record Reading(long brokerTicks, long cpuTotalTicks, long stealTicks) {}

    private ProcStat() {}

    /** Reads the broker's CPU ticks (pid <= 0: none) and the machine's total and steal ticks. */
    static Reading read(long pid) {
        long broker = -1;
        if (pid > 0) {
            try {
                String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
                // fields after the command name, which is in parentheses and may hold spaces
                String[] f = s.substring(s.lastIndexOf(')') + 2).trim().split("\\s+");
                // utime and stime are fields 14 and 15 of stat(5): 12 and 13 after "(comm) "
                broker = Long.parseLong(f[11]) + Long.parseLong(f[12]);
            } catch (IOException | RuntimeException e) {
                broker = -1;
            }
        }
        long total = -1;
        long steal = -1;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
                if (line.startsWith("cpu ")) {
                    String[] f = line.trim().split("\\s+");
                    total = 0;
                    for (int i = 1; i < f.length && i <= 8; i++) total += Long.parseLong(f[i]);
                    steal = f.length > 8 ? Long.parseLong(f[8]) : 0;
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            total = -1;
            steal = -1;
        }
        return new Reading(broker, total, steal);
    }
}
