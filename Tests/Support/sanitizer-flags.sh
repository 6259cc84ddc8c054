# Sourced by the scripts that build the shipped engine with sanitizers (Tests/Fuzz/fuzz.sh, Tests/Sanitized/
# run-sanitized.sh), after Vendor/sqlcipher.pin: the pin's flags with -O1 -g in place of its optimisation level (the
# -D flags, hidden visibility and -fPIC stay: this is the shipped configuration), plus the sanitizer flags given.
#   sanitizer_engine_flags FLAG...   sets ENGINE_FLAGS (the engine's) and DEFINES (the pin's -D flags alone, for
#                                    the programs compiled against it)
sanitizer_engine_flags() {
    local flag
    ENGINE_FLAGS=()
    DEFINES=()
    for flag in "${PIN_CFLAGS[@]}"; do
        case $flag in
            -O*) ;;
            -D*) ENGINE_FLAGS+=("$flag"); DEFINES+=("$flag") ;;
            *) ENGINE_FLAGS+=("$flag") ;;
        esac
    done
    ENGINE_FLAGS+=(-O1 -g "$@")
}
