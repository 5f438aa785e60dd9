namespace IpcBench.Daemon.Core;

/// <summary>What BenchDaemon's exit status means; README's "Exit codes" lists the same, for scripts and CI.</summary>
public static class ExitCodes
{
    public const int Ok = 0;

    /// <summary>A scenario or the suite failed, or the daemon stopped on a fault: the command was right, the run was not.</summary>
    public const int Failed = 1;

    /// <summary>The command or its configuration is wrong (unknown option or command, a bad value, an invalid setting): fix and rerun.</summary>
    public const int Usage = 2;

    /// <summary>`compare`: the candidate REGRESSED against the baseline (a CI gate's failure).</summary>
    public const int Regressed = 3;

    /// <summary>`compare`: the data cannot tell (too few repetitions, placements that do not overlap); nothing regressed.</summary>
    public const int Inconclusive = 4;

    /// <summary>`run --daemons`: some machines finished and are reported, others failed or vanished (the report names them and why).</summary>
    public const int Partial = 5;

    /// <summary>Ctrl+C (SIGINT), as shells report it: 128 + 2.</summary>
    public const int Interrupted = 130;

    /// <summary>SIGTERM ended `run` early: 128 + 15. `serve` stopping on SIGTERM is its ordinary end, 0.</summary>
    public const int Terminated = 143;
}
