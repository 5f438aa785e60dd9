using System.Globalization;
using System.Text;

namespace IpcBench.Workload.Placement;

/// <summary>
/// A set of CPU numbers in the kernel's CPU-list syntax ("0", "2-3,6"), as cpuset, taskset -c and the files under
/// /sys/devices/system/cpu write them. Kept sorted and without repeats; the order of the list is the order of its CPUs.
/// </summary>
public sealed class CpuSet : IEquatable<CpuSet>
{
    /// <summary>The kernel's own ceiling (CONFIG_NR_CPUS at most 8192): a larger number is a typo, not a CPU.</summary>
    public const int MaxCpu = 8191;

    private readonly int[] _cpus;

    private CpuSet(int[] sortedDistinct) => _cpus = sortedDistinct;

    public static CpuSet Empty { get; } = new([]);

    /// <summary>The CPUs in ascending order.</summary>
    public IReadOnlyList<int> Cpus => _cpus;

    public int Count => _cpus.Length;

    public bool IsEmpty => _cpus.Length == 0;

    public static CpuSet Of(IEnumerable<int> cpus)
    {
        ArgumentNullException.ThrowIfNull(cpus);
        var sorted = cpus.Distinct().Order().ToArray();
        if (sorted.Length > 0 && (sorted[0] < 0 || sorted[^1] > MaxCpu))
        {
            throw new ArgumentOutOfRangeException(nameof(cpus), $"CPU numbers are 0..{MaxCpu}");
        }

        return new CpuSet(sorted);
    }

    /// <summary>Parses a CPU list; an empty or blank text is the empty set.</summary>
    /// <exception cref="FormatException">The text is not a CPU list; the message says which part and what is allowed.</exception>
    public static CpuSet Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (string.IsNullOrWhiteSpace(text))
        {
            return Empty;
        }

        var cpus = new SortedSet<int>();
        foreach (var raw in text.Split(','))
        {
            var item = raw.Trim();
            int dash = item.IndexOf('-', StringComparison.Ordinal);
            int first = ParseCpu(dash < 0 ? item : item[..dash], item);
            int last = dash < 0 ? first : ParseCpu(item[(dash + 1)..], item);
            if (last < first)
            {
                throw new FormatException($"'{Shorten(item)}' is a descending range; write it low-high, e.g. \"2-3\"");
            }

            for (int cpu = first; cpu <= last; cpu++)
            {
                cpus.Add(cpu);
            }
        }

        return new CpuSet([.. cpus]);
    }

    public static bool TryParse(string text, out CpuSet cpus)
    {
        try
        {
            cpus = Parse(text);
            return true;
        }
        catch (FormatException)
        {
            cpus = Empty;
            return false;
        }
    }

    public bool Contains(int cpu) => Array.BinarySearch(_cpus, cpu) >= 0;

    /// <summary>The <paramref name="index"/>-th CPU of the list, wrapping: how publishers and subscribers are spread over it.</summary>
    public int AtWrapped(int index) => _cpus[index % _cpus.Length];

    public CpuSet Except(CpuSet other) => new([.. _cpus.Where(c => !other.Contains(c))]);

    public bool IsSubsetOf(CpuSet other) => _cpus.All(other.Contains);

    /// <summary>A cpu_set_t as sched_setaffinity takes it: 64 CPUs per word, CPU n at bit n % 64 of word n / 64.</summary>
    public ulong[] ToMask()
    {
        var mask = new ulong[_cpus.Length == 0 ? 1 : (_cpus[^1] / 64) + 1];
        foreach (int cpu in _cpus)
        {
            mask[cpu / 64] |= 1UL << (cpu % 64);
        }

        return mask;
    }

    public static CpuSet FromMask(ReadOnlySpan<ulong> mask)
    {
        var cpus = new List<int>();
        for (int word = 0; word < mask.Length; word++)
        {
            for (int bit = 0; bit < 64; bit++)
            {
                if ((mask[word] & (1UL << bit)) != 0)
                {
                    cpus.Add((word * 64) + bit);
                }
            }
        }

        return new CpuSet([.. cpus]);
    }

    /// <summary>The canonical CPU list, ranges collapsed ("0-3,6"); empty for the empty set.</summary>
    public override string ToString()
    {
        var text = new StringBuilder();
        for (int i = 0; i < _cpus.Length; i++)
        {
            int start = _cpus[i];
            while (i + 1 < _cpus.Length && _cpus[i + 1] == _cpus[i] + 1)
            {
                i++;
            }

            if (text.Length > 0)
            {
                text.Append(',');
            }

            text.Append(CultureInfo.InvariantCulture, $"{start}");
            if (_cpus[i] != start)
            {
                text.Append(CultureInfo.InvariantCulture, $"-{_cpus[i]}");
            }
        }

        return text.ToString();
    }

    public bool Equals(CpuSet? other) => other is not null && _cpus.AsSpan().SequenceEqual(other._cpus);

    public override bool Equals(object? obj) => Equals(obj as CpuSet);

    public override int GetHashCode() => ToString().GetHashCode(StringComparison.Ordinal);

    private static int ParseCpu(string text, string item)
    {
        var trimmed = text.Trim();
        if (trimmed.Length == 0 || !trimmed.All(char.IsAsciiDigit))
        {
            throw new FormatException($"'{Shorten(item)}' is not a CPU number or range; a CPU list looks like \"0\" or \"2-3,6\"");
        }

        if (!int.TryParse(trimmed, NumberStyles.None, CultureInfo.InvariantCulture, out int cpu) || cpu > MaxCpu)
        {
            throw new FormatException($"CPU {Shorten(trimmed)} is beyond the kernel's limit of {MaxCpu}");
        }

        return cpu;
    }

    private static string Shorten(string value) => value.Length <= 32 ? value : string.Concat(value.AsSpan(0, 32), "...");
}
