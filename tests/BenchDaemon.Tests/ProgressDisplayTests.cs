using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Daemon.Run;
using IpcBench.V1;
using Spectre.Console;

namespace IpcBench.Daemon.Tests;

/// <summary>`run`'s choice between a live progress display and plain lines, with the environment given explicitly.</summary>
[Collection(LightCollection.Name)]
public sealed class ProgressDisplayTests : IDisposable
{
    private static readonly Dictionary<string, string> Terminal = new() { ["TERM"] = "xterm-256color" };
    private readonly string? _term = Environment.GetEnvironmentVariable("TERM");

    // Spectre.Console detects ANSI support from the process's own TERM, not the variables it is given: set it as a
    // terminal would, so the outcome does not depend on where the tests run (no test in this assembly runs in parallel).
    public ProgressDisplayTests() => Environment.SetEnvironmentVariable("TERM", Terminal["TERM"]);

    public void Dispose() => Environment.SetEnvironmentVariable("TERM", _term);

    [Fact]
    public void ATerminalThatSpeaksAnsi_GetsTheLiveDisplay_WritingToTheGivenWriter()
    {
        using var error = new StringWriter();
        var console = ProgressDisplay.LiveConsole(errorRedirected: false, error, Terminal);

        Assert.NotNull(console);
        console.Markup("[red]x[/]");
        Assert.Contains("\u001b[", error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void RedirectedStderr_GetsPlainLines_WhateverTheTerminalType()
    {
        Assert.Null(ProgressDisplay.LiveConsole(errorRedirected: true, TextWriter.Null, Terminal));
    }

    [Fact]
    public void TermDumb_GetsPlainLines()
    {
        Assert.Null(ProgressDisplay.LiveConsole(errorRedirected: false, TextWriter.Null, new Dictionary<string, string> { ["TERM"] = "dumb" }));
    }

    [Fact]
    public void NoColor_KeepsTheLiveDisplay_WithoutColours()
    {
        var console = ProgressDisplay.LiveConsole(errorRedirected: false, TextWriter.Null, new Dictionary<string, string>(Terminal) { ["NO_COLOR"] = "1" });

        Assert.NotNull(console);
        Assert.Equal(ColorSystem.NoColors, console.Profile.Capabilities.ColorSystem);
        Assert.NotEqual(ColorSystem.NoColors, ProgressDisplay.LiveConsole(errorRedirected: false, TextWriter.Null, Terminal)!.Profile.Capabilities.ColorSystem);
    }

    [Fact]
    public void ACiServiceSpectreRecognizes_GetsPlainLines_EvenOnATerminal()
    {
        Assert.Null(ProgressDisplay.LiveConsole(errorRedirected: false, TextWriter.Null, new Dictionary<string, string>(Terminal) { ["GITHUB_ACTIONS"] = "true" }));
    }

    [Fact]
    public void Describe_NamesTheScenarioItsPlaceAndItsLiveRate()
    {
        var scenario = new Scenario
        {
            State = ScenarioState.Running,
            Spec = new ScenarioSpec { Transport = "uds", PayloadBytes = 1024, Publishers = 2, Subscribers = 3, Topology = Topology.Paired, PayloadAccess = PayloadAccess.HeaderOnly },
            LastInterval = new IntervalStats { MessagesPerSecond = 1_234_567 },
        };

        Assert.Equal("[2/8] uds 1 KB header-only 2:3 paired RUNNING 1.23 M msg/s", MatrixProgress.Describe(2, 8, scenario));
    }
}
