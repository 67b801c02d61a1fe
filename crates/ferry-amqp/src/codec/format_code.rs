//! The format codes (constructors) of the AMQP 1.0 type system, spec part 1.6.

/// Described-type constructor: a descriptor value and a value follow.
pub const DESCRIBED: u8 = 0x00;
/// `null`.
pub const NULL: u8 = 0x40;
/// `true` (no data).
pub const TRUE: u8 = 0x41;
/// `false` (no data).
pub const FALSE: u8 = 0x42;
/// `boolean` with one data byte.
pub const BOOLEAN: u8 = 0x56;
/// `ubyte`.
pub const UBYTE: u8 = 0x50;
/// `ushort`.
pub const USHORT: u8 = 0x60;
/// `uint`, 4 bytes.
pub const UINT: u8 = 0x70;
/// `uint` in one byte.
pub const SMALL_UINT: u8 = 0x52;
/// `uint` 0, no data.
pub const UINT0: u8 = 0x43;
/// `ulong`, 8 bytes.
pub const ULONG: u8 = 0x80;
/// `ulong` in one byte.
pub const SMALL_ULONG: u8 = 0x53;
/// `ulong` 0, no data.
pub const ULONG0: u8 = 0x44;
/// `byte`.
pub const BYTE: u8 = 0x51;
/// `short`.
pub const SHORT: u8 = 0x61;
/// `int`, 4 bytes.
pub const INT: u8 = 0x71;
/// `int` in one signed byte.
pub const SMALL_INT: u8 = 0x54;
/// `long`, 8 bytes.
pub const LONG: u8 = 0x81;
/// `long` in one signed byte.
pub const SMALL_LONG: u8 = 0x55;
/// `float`.
pub const FLOAT: u8 = 0x72;
/// `double`.
pub const DOUBLE: u8 = 0x82;
/// `decimal32`.
pub const DECIMAL32: u8 = 0x74;
/// `decimal64`.
pub const DECIMAL64: u8 = 0x84;
/// `decimal128`.
pub const DECIMAL128: u8 = 0x94;
/// `char` (UTF-32).
pub const CHAR: u8 = 0x73;
/// `timestamp`.
pub const TIMESTAMP: u8 = 0x83;
/// `uuid`.
pub const UUID: u8 = 0x98;
/// `binary` up to 255 bytes.
pub const VBIN8: u8 = 0xa0;
/// `binary` up to 2^32-1 bytes.
pub const VBIN32: u8 = 0xb0;
/// `string` up to 255 bytes.
pub const STR8: u8 = 0xa1;
/// `string` up to 2^32-1 bytes.
pub const STR32: u8 = 0xb1;
/// `symbol` up to 255 bytes.
pub const SYM8: u8 = 0xa3;
/// `symbol` up to 2^32-1 bytes.
pub const SYM32: u8 = 0xb3;
/// The empty list.
pub const LIST0: u8 = 0x45;
/// `list` with 1-byte size and count.
pub const LIST8: u8 = 0xc0;
/// `list` with 4-byte size and count.
pub const LIST32: u8 = 0xd0;
/// `map` with 1-byte size and count.
pub const MAP8: u8 = 0xc1;
/// `map` with 4-byte size and count.
pub const MAP32: u8 = 0xd1;
/// `array` with 1-byte size and count.
pub const ARRAY8: u8 = 0xe0;
/// `array` with 4-byte size and count.
pub const ARRAY32: u8 = 0xf0;
