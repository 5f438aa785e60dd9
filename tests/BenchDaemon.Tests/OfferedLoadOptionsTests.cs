using IpcBench.Daemon.Tests.Infrastructure;
using System.CommandLine;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Run;
using IpcBench.Reports;
using IpcBench.Transports;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>`run --rates` and `run --find-max-rate`'s options as read and planned (the run itself is RunCommandTests' business).</summary>
[Collection(LightCollection.Name)]
public sealed class OfferedLoadOptionsTests
{
    private static RunSettings Read(string commandLine)
    {
        var (options, result) = Parse(commandLine);
        return options.Read(result);
    }

    private static (RunOptions Options, ParseResult Result) Parse(string commandLine)
    {
        var options = new RunOptions();
        var command = new Command("run");
        foreach (var option in options.All)
        {
            command.Options.Add(option);
        }

        var result = command.Parse(commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Empty(result.Errors);
        return (options, result);
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

    /// <summary>
    /// What `run` says about bad offered load: the CLI's own syntax and combination errors, else the planner's refusal
    /// (the rule StartSuite applies, written once in SuiteRates) under the option's name, as `run` prints it (LocalRun).
    /// </summary>
    [Theory]
    [InlineData("--rates 1000,-5", "--rates: [1] must be 0 (closed loop) to 1e9 msg/s per publisher; got -5")]
    [InlineData("--rates 2e9", "--rates: [0] must be 0 (closed loop) to 1e9 msg/s per publisher; got 2000000000")]
    [InlineData("--rates 1000,abc", "--rates: 'abc' is not a number")]
    [InlineData("--rates 100,1000,100", "--rates: [2] repeats 100: each rate once")]
    [InlineData("--rates 100,1000 --rate 5", "--rates: give the rates in --rates or one rate in --rate, not both")]
    [InlineData("--find-max-rate", "--find-max-rate needs --max-p99")]
    [InlineData("--find-max-rate --max-p99 0s", "--max-p99: must be 1 µs to 10 s; got 0s 0ns")]
    [InlineData("--find-max-rate --max-p99 11s", "--max-p99: must be 1 µs to 10 s; got 11s 0ns")]
    [InlineData("--find-max-rate --max-p99 fast", "--max-p99: 'fast' is not a duration")]
    [InlineData("--find-max-rate --max-p99 1ms --max-steps 1", "--max-steps: must be 2..30 (0 means 10); got 1")]
    [InlineData("--find-max-rate --max-p99 1ms --max-steps 31", "--max-steps: must be 2..30 (0 means 10); got 31")]
    [InlineData("--find-max-rate --max-p99 1ms --min-delivered 1.5", "--min-delivered: must be > 0 and <= 1 (0 means 0.99); got 1.5")]
    [InlineData("--find-max-rate --max-p99 1ms --rates 10,20", "--find-max-rate searches the rate itself")]
    [InlineData("--find-max-rate --max-p99 1ms --rate 10", "--find-max-rate searches the rate itself")]
    [InlineData("--find-max-rate --max-p99 1ms --repetitions 3", "--find-max-rate runs each cell's search once")]
    [InlineData("--max-p99 1ms", "--max-p99, --max-steps and --min-delivered: only with --find-max-rate")]
    [InlineData("--max-steps 4", "--max-p99, --max-steps and --min-delivered: only with --find-max-rate")]
    public void BadOfferedLoad_IsRefused_NamingTheOption(string commandLine, string expected)
    {
        Assert.StartsWith(expected, Refused("--transports channels " + commandLine), StringComparison.Ordinal);
    }

    /// <summary>A good line passes both: the suite `run` plans carries the sweep and the search as given.</summary>
    [Fact]
    public void GoodOfferedLoad_IsPlanned_AsGiven()
    {
        var sweep = Planner().Plan(RunSuiteSpec.From(Read("--transports channels --payloads 8 --rates 10,20,30"), RunSuiteSpec.Local), _ => true);
        Assert.Equal([10, 20, 30], sweep.Cells.Select(c => c.RatePerPublisher));

        var search = Planner().Plan(RunSuiteSpec.From(Read("--transports channels --payloads 8 --find-max-rate --max-p99 250us --max-steps 4 --latency-sample-every 8"),
            RunSuiteSpec.Local), _ => true).Search!;
        Assert.Equal((TimeSpan.FromMicroseconds(250), 4, 8), (search.MaxP99Latency, search.MaxSteps, search.LatencySampleEvery));
    }

    private static string Refused(string commandLine)
    {
        var (options, result) = Parse(commandLine);
        RunSettings settings;
        try
        {
            settings = options.Read(result);
        }
        catch (ArgumentException e)
        {
            return e.Message;
        }

        return options.Refusal(Assert.Throws<RequestRefusedException>(() => Planner().Plan(RunSuiteSpec.From(settings, RunSuiteSpec.Local), _ => true)));
    }

    /// <summary>The planner `run` and StartSuite share, over this build's registry.</summary>
    private static SuitePlanner Planner()
    {
        var registry = TransportRegistry.CreateDefault();
        return new SuitePlanner(new SpecValidator(registry, Options.Create(new DaemonOptions())), registry, new PresetCatalog(registry.All.Select(t => t.Id)));
    }
}
