using System.Globalization;

namespace IpcBench.Workload;

/// <summary>
/// /proc/&lt;pid&gt;/stat read as text: "pid (comm) state ppid …", where comm may itself hold spaces and parentheses, so
/// fields are counted from the last ')'. (ProcessInstance keeps its own allocation-free reading of the start time.)
/// </summary>
public static class ProcStat
{
    /// <summary>Field <paramref name="number"/> as proc(5) numbers them (3 or more) as an integer; null when absent or not one.</summary>
    public static long? Field(string stat, int number)
    {
        int close = stat.LastIndexOf(')');
        if (close < 0 || number < 3)
        {
            return null;
        }

        var fields = stat[(close + 1)..].Split(' ', StringSplitOptions.RemoveEmptyEntries);
        int index = number - 3;
        return index < fields.Length && long.TryParse(fields[index], NumberStyles.Integer, CultureInfo.InvariantCulture, out long value)
            ? value
            : null;
    }
}
