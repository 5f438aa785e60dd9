using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using IpcBench.Iceoryx2.Interop;

namespace IpcBench.Iceoryx2;

/// <summary>The messaging patterns the binding supports.</summary>
public enum Iceoryx2MessagingPattern : uint
{
    PublishSubscribe = 0,
    Event = 1,
}

/// <summary>iceoryx2's console log level (its own stderr logger).</summary>
public enum Iceoryx2LogLevel
{
    Trace = 0,
    Debug = 1,
    Info = 2,
    Warn = 3,
    Error = 4,
    Fatal = 5,
}

/// <summary>Result of <see cref="Iceoryx2Library.CleanupDeadNodes"/>.</summary>
public readonly record struct DeadNodeCleanupResult(ulong Cleaned, ulong Failed);

/// <summary>
/// Entry point for availability checks and process-wide operations of the native binding (libipcbench_iox2.so).
/// </summary>
public static class Iceoryx2Library
{
    /// <summary>File name of the native library that is copied beside the assemblies.</summary>
    public const string NativeLibraryFileName = "libipcbench_iox2.so";

    private static readonly Lazy<string?> Unavailable = new(Probe, LazyThreadSafetyMode.ExecutionAndPublication);

    // What Configure was given; read when the library is loaded.
    private static volatile string? _libraryPath;
    private static volatile int _logLevel = (int)Iceoryx2LogLevel.Error;

    static Iceoryx2Library()
    {
        NativeLibrary.SetDllImportResolver(typeof(Iceoryx2Library).Assembly, Resolve);
    }

    /// <summary>
    /// Where to load the native library from (null: beside this assembly, the normal case; a full path is a debugging
    /// aid) and iceoryx2's own console log level (iceoryx2 logs at Info by default, e.g. that no config file exists).
    /// The path counts only before the library is first used; the log level is applied now if it is loaded already.
    /// </summary>
    public static void Configure(string? libraryPath, Iceoryx2LogLevel logLevel)
    {
        _libraryPath = string.IsNullOrEmpty(libraryPath) ? null : libraryPath;
        _logLevel = (int)logLevel;
        if (Unavailable.IsValueCreated && Unavailable.Value is null)
        {
            _ = NativeMethods.iox2b_set_log_level((int)logLevel);
        }
    }

    /// <summary>True when the native library loads and has the expected ABI version.</summary>
    public static bool IsAvailable => Unavailable.Value is null;

    /// <summary>Why <see cref="IsAvailable"/> is false (null when available).</summary>
    public static string? UnavailableReason => Unavailable.Value;

    /// <summary>
    /// What the MSBuild step recorded about building the native library ("ok" or the reason it was not built).
    /// </summary>
    public static string NativeBuildStatus =>
        typeof(Iceoryx2Library).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .FirstOrDefault(a => a.Key == "IpcBench.Iceoryx2.NativeBuild")?.Value ?? "unknown";

    /// <summary>Throws <see cref="Iceoryx2Exception"/> (<see cref="Iceoryx2ErrorCode.LibraryUnavailable"/>) when not available.</summary>
    public static void EnsureAvailable()
    {
        if (Unavailable.Value is { } reason)
        {
            throw new Iceoryx2Exception(Iceoryx2ErrorCode.LibraryUnavailable, reason);
        }
    }

    /// <summary>Sets iceoryx2's own console log level (process-wide).</summary>
    public static void SetLogLevel(Iceoryx2LogLevel level)
    {
        EnsureAvailable();
        Check(NativeMethods.iox2b_set_log_level((int)level));
    }

    /// <summary>
    /// Removes the stale resources (files in /dev/shm and /tmp/iceoryx2) of every dead node, i.e. of processes
    /// that died without disposing their iceoryx2 objects. Creating a node does this too.
    /// </summary>
    public static unsafe DeadNodeCleanupResult CleanupDeadNodes()
    {
        EnsureAvailable();
        ulong cleaned = 0, failed = 0;
        Check(NativeMethods.iox2b_cleanup_dead_nodes(&cleaned, &failed));
        return new DeadNodeCleanupResult(cleaned, failed);
    }

    /// <summary>True when a service with this name and pattern exists (created by any process).</summary>
    public static unsafe bool ServiceExists(string serviceName, Iceoryx2MessagingPattern pattern)
    {
        ArgumentNullException.ThrowIfNull(serviceName);
        EnsureAvailable();
        int exists = 0;
        Check(NativeMethods.iox2b_service_exists(serviceName, (uint)pattern, &exists));
        return exists != 0;
    }

    /// <summary>The hash iceoryx2 uses in the file names of a service's resources.</summary>
    public static unsafe string GetServiceHash(string serviceName, Iceoryx2MessagingPattern pattern)
    {
        ArgumentNullException.ThrowIfNull(serviceName);
        EnsureAvailable();
        byte* buf = stackalloc byte[256];
        int len = Check(NativeMethods.iox2b_service_hash(serviceName, (uint)pattern, buf, 256));
        return Encoding.UTF8.GetString(buf, len);
    }

    private static nint Resolve(string libraryName, Assembly assembly, DllImportSearchPath? searchPath)
    {
        if (libraryName != NativeMethods.LibraryName)
        {
            return 0;
        }

        if (_libraryPath is { } overridePath)
        {
            return NativeLibrary.Load(overridePath);
        }

        // Beside this assembly first (the normal case), then the default probing.
        var dir = Path.GetDirectoryName(assembly.Location);
        if (!string.IsNullOrEmpty(dir))
        {
            var candidate = Path.Combine(dir, NativeLibraryFileName);
            if (File.Exists(candidate) && NativeLibrary.TryLoad(candidate, out var h))
            {
                return h;
            }
        }

        return 0;
    }

    private static string? Probe()
    {
        if (!OperatingSystem.IsLinux())
        {
            return "iceoryx2 bindings are only built for Linux";
        }

        int version;
        try
        {
            version = NativeMethods.iox2b_abi_version();
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException)
        {
            var status = NativeBuildStatus;
            var dir = Path.GetDirectoryName(typeof(Iceoryx2Library).Assembly.Location);
            var why = status == "ok"
                ? $"it was built but could not be loaded from '{dir}' ({e.Message})"
                : status;
            return $"{NativeLibraryFileName} not found: {why}";
        }

        if (version != NativeMethods.ExpectedAbiVersion)
        {
            return $"{NativeLibraryFileName} has ABI version {version} but IpcBench.Iceoryx2 expects {NativeMethods.ExpectedAbiVersion}; rebuild native/iceoryx2-ipcbench";
        }

        _ = NativeMethods.iox2b_set_log_level(_logLevel);
        return null;
    }

    // ------------------------------------------------------------------------------------------------
    // status handling shared by the wrappers
    // ------------------------------------------------------------------------------------------------

    /// <summary>Returns non-negative statuses, throws for negative ones.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Check(int status)
    {
        if (status < 0)
        {
            ThrowFromStatus(status);
        }

        return status;
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowFromStatus(int status) => throw CreateException(status);

    internal static unsafe Iceoryx2Exception CreateException(int status)
    {
        string message;
        byte* buf = stackalloc byte[1024];
        int len = NativeMethods.iox2b_last_error(buf, 1024);
        if (len < 0)
        {
            message = "(the native error text could not be read)";
        }
        else if (len < 1024)
        {
            message = Encoding.UTF8.GetString(buf, len);
        }
        else
        {
            var big = new byte[len + 1];
            fixed (byte* p = big)
            {
                len = Math.Min(len, NativeMethods.iox2b_last_error(p, (nuint)big.Length));
            }

            message = Encoding.UTF8.GetString(big, 0, len);
        }

        var code = Enum.IsDefined((Iceoryx2ErrorCode)status) ? (Iceoryx2ErrorCode)status : Iceoryx2ErrorCode.Internal;
        return new Iceoryx2Exception(code, $"iceoryx2 {code}: {message}");
    }
}
