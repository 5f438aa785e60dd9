using System.Buffers;
using System.Buffers.Binary;
using System.Globalization;
using System.Text;

namespace IpcBench.GrpcLite;

/// <summary>Wire-level details of gRPC over HTTP/2 shared by the server and the client.</summary>
internal static class GrpcProtocol
{
    public const string ContentType = "application/grpc";
    public const string StatusHeader = "grpc-status";
    public const string MessageHeader = "grpc-message";
    public const string TimeoutHeader = "grpc-timeout";
    public const string EncodingHeader = "grpc-encoding";
    public const string AcceptEncodingHeader = "grpc-accept-encoding";
    public const int FrameHeaderSize = 5;
    public const int DefaultMaxMessageSize = 4 * 1024 * 1024;

    /// <summary>The service of a method path: <c>ipcbench.v1.BenchControl</c> for <c>/ipcbench.v1.BenchControl/StartScenario</c>.</summary>
    public static string ServiceOf(string methodPath)
    {
        var slash = methodPath.Length > 1 ? methodPath.IndexOf('/', 1) : -1;
        return slash > 1 && methodPath[0] == '/' ? methodPath[1..slash] : "";
    }

    /// <summary>application/grpc and application/grpc+proto, with or without parameters; not +json or other codecs.</summary>
    public static bool IsGrpcContentType(string? contentType)
    {
        if (contentType is null || !contentType.StartsWith(ContentType, StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }

        var rest = contentType.AsSpan(ContentType.Length);
        var semicolon = rest.IndexOf(';');
        var subtype = (semicolon < 0 ? rest : rest[..semicolon]).Trim();
        return subtype.IsEmpty || subtype.Equals("+proto", StringComparison.OrdinalIgnoreCase);
    }

    public static void WriteFrameHeader(Span<byte> destination, int messageLength)
    {
        destination[0] = 0;
        BinaryPrimitives.WriteUInt32BigEndian(destination[1..], (uint)messageLength);
    }

    /// <summary>
    /// Reads one length-prefixed message's header from <paramref name="header"/> and returns its length,
    /// rejecting compression (never negotiated) and oversized messages before their bytes are buffered.
    /// </summary>
    /// <param name="malformed">
    /// The status for a frame the peer should never have sent: INTERNAL for a client reading a response (the server
    /// broke the protocol), INVALID_ARGUMENT for a server reading a request (the caller's fault, nothing broke inside).
    /// </param>
    public static int ReadFrameHeader(ReadOnlySpan<byte> header, int maxMessageSize, string direction, StatusCode malformed)
    {
        if (header[0] != 0)
        {
            throw header[0] == 1
                ? new RpcException(malformed, $"Compressed {direction} messages are not supported: no grpc-encoding was negotiated; send them uncompressed.")
                : new RpcException(malformed, $"Invalid {direction} message flags 0x{header[0]:x2}.");
        }

        var length = BinaryPrimitives.ReadUInt32BigEndian(header[1..]);
        if (length > (uint)maxMessageSize)
        {
            throw new RpcException(StatusCode.ResourceExhausted, $"Received {direction} message larger than max ({length} vs. {maxMessageSize}).");
        }

        return (int)length;
    }

    public static int ReadFrameHeader(in ReadOnlySequence<byte> buffer, int maxMessageSize, string direction, StatusCode malformed)
    {
        Span<byte> header = stackalloc byte[FrameHeaderSize];
        buffer.Slice(0, FrameHeaderSize).CopyTo(header);
        return ReadFrameHeader(header, maxMessageSize, direction, malformed);
    }

    /// <summary>Status messages longer than this are cut; see <see cref="LimitMessage"/>.</summary>
    public const int MaxStatusMessageLength = 2048;

    /// <summary>
    /// Cuts a status message to <see cref="MaxStatusMessageLength"/> characters. Messages often quote what the caller
    /// sent, and a header as large as the request would exceed clients' header limits (HttpClient's is 64 KiB), which
    /// they report as a broken connection, taking every other call on that connection down with it.
    /// </summary>
    public static string LimitMessage(string message) =>
        message.Length <= MaxStatusMessageLength
            ? message
            : string.Concat(message.AsSpan(0, MaxStatusMessageLength), $"... ({message.Length - MaxStatusMessageLength} more characters)");

    /// <summary>Percent-encodes grpc-message as the spec requires: UTF-8, with '%' and bytes outside 0x20-0x7E escaped.</summary>
    public static string EncodeMessage(string message)
    {
        if (!NeedsEncoding(message))
        {
            return message;
        }

        var bytes = Encoding.UTF8.GetBytes(message);
        var builder = new StringBuilder(bytes.Length * 3);
        foreach (var b in bytes)
        {
            if (b is >= 0x20 and <= 0x7E and not (byte)'%')
            {
                builder.Append((char)b);
            }
            else
            {
                builder.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
            }
        }

        return builder.ToString();
    }

    /// <summary>Reverses <see cref="EncodeMessage"/>; malformed escapes are kept literally rather than failing the call.</summary>
    public static string DecodeMessage(string message)
    {
        if (!message.Contains('%'))
        {
            return message;
        }

        var bytes = new List<byte>(message.Length);
        for (var i = 0; i < message.Length; i++)
        {
            var c = message[i];
            if (c == '%' && i + 2 < message.Length
                && byte.TryParse(message.AsSpan(i + 1, 2), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out var b))
            {
                bytes.Add(b);
                i += 2;
            }
            else if (c < 0x80)
            {
                bytes.Add((byte)c);
            }
            else
            {
                // Not valid on the wire, but some servers send raw text; keep it readable.
                bytes.AddRange(Encoding.UTF8.GetBytes(c.ToString()));
            }
        }

        return Encoding.UTF8.GetString(bytes.ToArray());
    }

    /// <summary>Parses grpc-timeout: at most 8 digits and a unit (H, M, S, m, u, n).</summary>
    public static bool TryParseTimeout(string? value, out TimeSpan timeout)
    {
        timeout = default;
        if (value is null || value.Length is < 2 or > 9
            || !long.TryParse(value.AsSpan(0, value.Length - 1), NumberStyles.None, CultureInfo.InvariantCulture, out var amount))
        {
            return false;
        }

        long? ticks = value[^1] switch
        {
            'H' => amount * TimeSpan.TicksPerHour,
            'M' => amount * TimeSpan.TicksPerMinute,
            'S' => amount * TimeSpan.TicksPerSecond,
            'm' => amount * TimeSpan.TicksPerMillisecond,
            'u' => amount * 10,
            'n' => amount / 100,
            _ => null,
        };
        if (ticks is null)
        {
            return false;
        }

        timeout = TimeSpan.FromTicks(ticks.Value);
        return true;
    }

    /// <summary>Formats a positive timeout in the finest unit that fits grpc-timeout's 8 digits, rounding up.</summary>
    public static string FormatTimeout(TimeSpan timeout)
    {
        const long maxAmount = 99_999_999;
        ReadOnlySpan<(long TicksPerUnit, char Unit)> units =
        [
            (10, 'u'),
            (TimeSpan.TicksPerMillisecond, 'm'),
            (TimeSpan.TicksPerSecond, 'S'),
            (TimeSpan.TicksPerMinute, 'M'),
            (TimeSpan.TicksPerHour, 'H'),
        ];
        foreach (var (ticksPerUnit, unit) in units)
        {
            var amount = (timeout.Ticks + ticksPerUnit - 1) / ticksPerUnit;
            if (amount <= maxAmount)
            {
                return string.Create(CultureInfo.InvariantCulture, $"{Math.Max(amount, 1)}{unit}");
            }
        }

        return string.Create(CultureInfo.InvariantCulture, $"{maxAmount}H");
    }

    private static bool NeedsEncoding(string message)
    {
        foreach (var c in message)
        {
            if (c is < (char)0x20 or > (char)0x7E or '%')
            {
                return true;
            }
        }

        return false;
    }
}
