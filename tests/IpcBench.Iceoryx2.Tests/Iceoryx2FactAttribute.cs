namespace IpcBench.Iceoryx2.Tests;

/// <summary>
/// A fact that is skipped (with the reason) when libipcbench_iox2.so is unavailable, e.g. because the Rust
/// toolchain was missing at build time — unless IPCBENCH_REQUIRE_ICEORYX2=1, then it runs and fails.
/// </summary>
public sealed class Iceoryx2FactAttribute : FactAttribute
{
    public Iceoryx2FactAttribute()
    {
        if (!Iceoryx2Library.IsAvailable && Environment.GetEnvironmentVariable("IPCBENCH_REQUIRE_ICEORYX2") != "1")
        {
            Skip = $"iceoryx2 unavailable: {Iceoryx2Library.UnavailableReason}";
        }
    }
}

internal static class TestNames
{
    /// <summary>A service name no other test (or earlier run) uses.</summary>
    public static string UniqueService(string prefix) => $"ipcbench/tests/{prefix}/{Guid.NewGuid():N}";
}
