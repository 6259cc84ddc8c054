extension String {
    /// The string with zeros in front, to at least `width` characters (the fixed-width fields of a date).
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
