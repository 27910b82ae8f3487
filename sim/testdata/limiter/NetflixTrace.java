// NetflixTrace feeds trace.txt to Netflix concurrency-limits' own AIMDLimit
// and Gradient2Limit (commit 78a74b9) and prints each configuration's limit
// after every sample: the trajectory that sim's TestLimiterTrace holds its
// port to. regen.sh builds it against that commit's sources.
import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

public class NetflixTrace {
    public static void main(String[] args) throws Exception {
        List<long[]> trace = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            if (line.startsWith("#") || line.isBlank()) continue;
            String[] f = line.trim().split("\\s+");
            trace.add(new long[]{Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])});
        }
        run("aimd-default", AIMDLimit.newBuilder().build(), trace);
        run("aimd", AIMDLimit.newBuilder().initialLimit(20).minLimit(5).maxLimit(60).backoffRatio(0.75)
                .timeout(5, TimeUnit.SECONDS).build(), trace);
        run("gradient2-default", Gradient2Limit.newDefault(), trace);
        run("gradient2", Gradient2Limit.newBuilder().initialLimit(20).minLimit(5).maxConcurrency(60)
                .smoothing(0.3).build(), trace);
    }

    static void run(String name, Limit limit, List<long[]> trace) {
        StringBuilder b = new StringBuilder(name);
        for (long[] s : trace) {
            limit.onSample(0, s[0], (int) s[1], s[2] != 0);
            b.append(' ').append(limit.getLimit());
        }
        System.out.println(b);
    }
}
