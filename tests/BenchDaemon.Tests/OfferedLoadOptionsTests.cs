using System.CommandLine;
using IpcBench.Daemon.Run;

namespace IpcBench.Daemon.Tests;

/// <summary>`run --rates` and `run --find-max-rate`'s options as read (the run itself is RunCommandTests' business).</summary>
public sealed class OfferedLoadOptionsTests
{
    private static RunSettings Read(string commandLine)
    {
        var options = new RunOptions();
        var command = new Command("run");
        foreach (var option in options.All)
        {
            command.Options.Add(option);
        }

        var result = command.Parse(commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Empty(result.Errors);
        return options.Read(result);
    }

    [Fact]
    public void Rates_AreTheSweep_FindMaxRate_IsTheSearch()
    {
        Assert.Equal([1000, 10_000, 100_000], Read("--rates 1000,10000,100000").Load!.Rates);
        Assert.Equal([250], Read("--rate 250").Load!.Rates);

        var search = Read("--find-max-rate --max-p99 1ms --max-steps 6 --latency-sample-every 4").Load!.Search!;
        Assert.Equal(TimeSpan.FromMilliseconds(1), search.MaxP99Latency);
        Assert.Equal(6, search.MaxSteps);
        Assert.Equal(0.99, search.MinDeliveredRatio);
        Assert.Equal(4, search.LatencySampleEvery);
        Assert.Equal(TimeSpan.FromMicroseconds(250), Read("--find-max-rate --max-p99 250us --min-delivered 0.9").Load!.Search!.MaxP99Latency);
    }

    [Theory]
    [InlineData("--rates 1000,-5", "--rates: '-5' is not a rate from 0 (closed loop) to 1e9 msg/s")]
    [InlineData("--rates 1000,abc", "--rates: 'abc' is not a rate")]
    [InlineData("--rates 100,1000,100", "--rates: 100 is listed twice; each rate once")]
    [InlineData("--rates 100,1000 --rate 5", "--rates: give the rates in --rates or one rate in --rate, not both")]
    [InlineData("--find-max-rate", "--find-max-rate needs --max-p99")]
    [InlineData("--find-max-rate --max-p99 0s", "--max-p99: '0s' is outside 1us to 10s")]
    [InlineData("--find-max-rate --max-p99 11s", "--max-p99: '11s' is outside 1us to 10s")]
    [InlineData("--find-max-rate --max-p99 fast", "--max-p99: 'fast' is not a duration")]
    [InlineData("--find-max-rate --max-p99 1ms --max-steps 1", "--max-steps: must be 2 to 30; got 1")]
    [InlineData("--find-max-rate --max-p99 1ms --max-steps 31", "--max-steps: must be 2 to 30; got 31")]
    [InlineData("--find-max-rate --max-p99 1ms --min-delivered 1.5", "--min-delivered: must be above 0 and at most 1; got 1.5")]
    [InlineData("--find-max-rate --max-p99 1ms --rates 10,20", "--find-max-rate searches the rate itself")]
    [InlineData("--find-max-rate --max-p99 1ms --rate 10", "--find-max-rate searches the rate itself")]
    [InlineData("--find-max-rate --max-p99 1ms --repetitions 3", "--find-max-rate runs each cell's search once")]
    [InlineData("--max-p99 1ms", "--max-p99, --max-steps and --min-delivered: only with --find-max-rate")]
    [InlineData("--max-steps 4", "--max-p99, --max-steps and --min-delivered: only with --find-max-rate")]
    public void BadOfferedLoad_IsAnError_NamingTheOption(string commandLine, string expected)
    {
        var e = Assert.Throws<ArgumentException>(() => Read(commandLine));

        Assert.StartsWith(expected, e.Message, StringComparison.Ordinal);
    }
}
