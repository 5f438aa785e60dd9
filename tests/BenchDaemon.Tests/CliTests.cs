using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Daemon.Cli;
using IpcBench.Daemon.Hosting;
using Microsoft.AspNetCore.DataProtection;

namespace IpcBench.Daemon.Tests;

/// <summary>BenchDaemon's command line, parsed in process: what is an error, what it says, and what reaches the host as a setting.</summary>
[Collection(LightCollection.Name)]
public sealed class CliTests
{
    [Theory]
    [InlineData("run --payload 8", "unknown option '--payload'; did you mean '--payloads'?")]
    [InlineData("run --transport uds", "unknown option '--transport'; did you mean '--transports'?")]
    [InlineData("serv", "unknown command 'serv'; did you mean 'serve'?")]
    [InlineData("frobnicate", "unknown command 'frobnicate'; the commands are serve, run, compare, health")]
    [InlineData("health --adress 127.0.0.1:1", "unknown option '--adress'; did you mean '--address'?")]
    [InlineData("serve --lsten 127.0.0.1:1", "unknown option '--lsten'; did you mean '--listen'?")]
    [InlineData("--payloads 8", "unknown option '--payloads'; it is an option of 'run'")]
    [InlineData("run 8", "unexpected argument '8'; BenchDaemon run takes options only")]
    [InlineData("run --IpcBench:DatabasePath /tmp/x.db", "unknown option '--IpcBench:DatabasePath'; a setting takes the form --IpcBench:DatabasePath=value")]
    public void UnknownTokens_AreErrors_NamingTheNearestValidOne(string commandLine, string expected)
    {
        var parsed = DaemonCommandLine.Parse(commandLine.Split(' '));

        // Only the error that matters: the 8 after --payload is that option's value, not a second problem.
        Assert.Equal([expected], parsed.Errors);
    }

    [Theory]
    [InlineData("run --repetitions 0", "--repetitions: '0' is not a whole number from 1 to 100")]
    [InlineData("run --repetitions many", "--repetitions: 'many' is not a whole number from 1 to 100")]
    [InlineData("run --payloads abc", "--payloads: 'abc' is not a positive whole number of bytes")]
    [InlineData("run --payloads 8,0", "--payloads: '0' is not a positive whole number of bytes")]
    [InlineData("run --publishers 0", "--publishers: '0' is not a whole number of at least 1")]
    [InlineData("run --realtime-priority 100", "--realtime-priority: '100' is not a whole number from 0 to 99")]
    [InlineData("run --rate -5", "--rate: '-5' is not a number of at least 0")]
    [InlineData("run --duration 5x", "--duration: '5x' is not a duration like 10s, 500ms, 2m or 1h")]
    [InlineData("run --wait spinn", "--wait: 'spinn' is not one of spin, yield, block")]
    [InlineData("run --topology ring", "--topology: 'ring' is not one of all-to-all, paired")]
    [InlineData("run --access half", "--access: 'half' is not one of full, header-only")]
    [InlineData("run --publisher-cpus 0-x", "--publisher-cpus: '0-x' is not a CPU number or range")]
    [InlineData("run --repetitions sometimes", "--repetitions: 'sometimes' is not a whole number from 1 to 100, or auto")]
    [InlineData("run --repetitions auto", "--repetitions auto needs --precision, the target in percent")]
    [InlineData("run --precision 2", "--precision: only with --repetitions auto")]
    [InlineData("run --repetitions 3 --precision 2", "--precision: only with --repetitions auto")]
    [InlineData("run --repetitions auto --precision 0", "--precision: '0' is not a number above 0 and at most 100 (percent)")]
    [InlineData("run --repetitions auto --precision 2 --max-repetitions 4", "--max-repetitions: '4' is not a whole number from 5 to 100")]
    [InlineData("run --max-repetitions 10", "--max-repetitions: only with --repetitions auto")]
    public void BadValues_AreErrors_NamingTheOptionAndWhatItTakes(string commandLine, string expected)
    {
        var parsed = DaemonCommandLine.Parse(commandLine.Split(' '));

        var error = Assert.Single(parsed.Errors);
        Assert.StartsWith(expected, error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("run --transports channels --payloads 8 --repetitions 100 --realtime-priority 99 --rate 0.5 --wait block")]
    [InlineData("serve --listen 127.0.0.1:50051")]
    [InlineData("--listen 127.0.0.1:50051")]
    [InlineData("run --help")]
    [InlineData("run --repetitions auto --precision 2")]
    [InlineData("run --preset reference-1 --repetitions AUTO --precision 0.5 --max-repetitions 100")]
    public void ValidCommandLines_HaveNoErrors(string commandLine) =>
        Assert.Empty(DaemonCommandLine.Parse(commandLine.Split(' ')).Errors);

    [Theory]
    [InlineData("run")]
    [InlineData("serve")]
    [InlineData("")]
    public void Settings_GoToTheHost_WhereverTheyStand(string verb)
    {
        string[] settings = ["--IpcBench:DatabasePath=/tmp/x.db", "--Serilog:MinimumLevel:Default=Warning", "--IpcBench:Transports:shm-ring:RingBytes=65536"];
        string[] args = [settings[0], .. verb.Length > 0 ? [verb] : Array.Empty<string>(), settings[1], settings[2]];

        var parsed = DaemonCommandLine.Parse(args);

        Assert.Empty(parsed.Errors);
        Assert.Equal(settings, parsed.Settings);
        var command = parsed.Result.CommandResult.Command;
        Assert.Equal(verb, command is System.CommandLine.RootCommand ? string.Empty : command.Name);
    }

    [Theory]
    [InlineData("--IpcBench:DatabasePath=/x", true)]
    [InlineData("--IpcBench:Transports:shm-ring:RingBytes=5", true)]
    [InlineData("--IpcBench:MetricsAddress=", true)]
    [InlineData("--IpcBench:DatabasePath", false)]
    [InlineData("--payloads=8", false)]
    [InlineData("--:x=1", false)]
    public void ASetting_IsSectionColonKeyEqualsValue(string token, bool isSetting) =>
        Assert.Equal(isSetting, ConfigurationArguments.IsSetting(token));

    [Fact]
    public async Task TheDaemon_RegistersNoDataProtection_WhichLoggedAKeyRingWarningAtEveryStart()
    {
        await using var app = DaemonHost.Build([], options =>
        {
            options.ControlAddress = string.Empty;
            options.MetricsAddress = string.Empty;
        });

        Assert.Null(app.Services.GetService(typeof(IDataProtectionProvider)));
        // Authentication itself is still there: the control token's scheme.
        var schemes = (Microsoft.AspNetCore.Authentication.IAuthenticationSchemeProvider)app.Services.GetService(typeof(Microsoft.AspNetCore.Authentication.IAuthenticationSchemeProvider))!;
        Assert.NotNull(await schemes.GetSchemeAsync(BearerTokenHandler.SchemeName));
    }
}
