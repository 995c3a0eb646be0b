/// Size limits of the MeshCore companion protocol.
public enum MeshCoreFrameLimits {
    /// The largest frame, code byte included, that either side sends (firmware `MAX_FRAME_SIZE`).
    public static let maximumFrameSize = 176
}

/// The code byte of each command the app sends to the radio.
public enum MeshCoreCommandCode: UInt8, Sendable, CaseIterable {
    /// `APP_START`: starts the session; answered with `SELF_INFO`.
    case appStart = 1
    /// `SEND_TXT_MSG`: sends a direct text message; answered with `SENT`.
    case sendTextMessage = 2
    /// `SEND_CHANNEL_TXT_MSG`: sends a channel text message; answered with `OK`.
    case sendChannelTextMessage = 3
    /// `GET_CONTACTS`: lists contacts, optionally only those modified since a time.
    case getContacts = 4
    /// `GET_DEVICE_TIME`: reads the radio's clock.
    case getDeviceTime = 5
    /// `SET_DEVICE_TIME`: sets the radio's clock.
    case setDeviceTime = 6
    /// `SEND_SELF_ADVERT`: advertises this node, zero-hop or flooded.
    case sendSelfAdvert = 7
    /// `SET_ADVERT_NAME`: sets the node's advertised name.
    case setAdvertName = 8
    /// `ADD_UPDATE_CONTACT`: adds or updates a contact.
    case addUpdateContact = 9
    /// `SYNC_NEXT_MESSAGE`: fetches the next queued received message.
    case syncNextMessage = 10
    /// `SET_RADIO_PARAMS`: sets frequency, bandwidth, spreading factor and coding rate.
    case setRadioParams = 11
    /// `SET_RADIO_TX_POWER`: sets the transmit power.
    case setRadioTxPower = 12
    /// `RESET_PATH`: forgets a contact's path.
    case resetPath = 13
    /// `SET_ADVERT_LATLON`: sets the advertised position.
    case setAdvertLatLon = 14
    /// `REMOVE_CONTACT`: deletes a contact.
    case removeContact = 15
    /// `SHARE_CONTACT`: shares a contact over the mesh.
    case shareContact = 16
    /// `EXPORT_CONTACT`: exports a contact as an advert packet.
    case exportContact = 17
    /// `IMPORT_CONTACT`: imports a contact from an advert packet.
    case importContact = 18
    /// `REBOOT`: reboots the radio.
    case reboot = 19
    /// `GET_BATT_AND_STORAGE`: reads battery voltage and storage use.
    case getBatteryAndStorage = 20
    /// `SET_TUNING_PARAMS`: sets radio timing parameters.
    case setTuningParams = 21
    /// `DEVICE_QUERY`: negotiates the protocol version; answered with `DEVICE_INFO`.
    case deviceQuery = 22
    /// `EXPORT_PRIVATE_KEY`: exports the node's private key.
    case exportPrivateKey = 23
    /// `IMPORT_PRIVATE_KEY`: imports a private key.
    case importPrivateKey = 24
    /// `SEND_RAW_DATA`: sends raw bytes along a path.
    case sendRawData = 25
    /// `SEND_LOGIN`: logs in to a repeater or room server.
    case sendLogin = 26
    /// `SEND_STATUS_REQ`: asks a repeater for its status.
    case sendStatusRequest = 27
    /// `HAS_CONNECTION`: asks whether a contact is logged in.
    case hasConnection = 28
    /// `LOGOUT`: logs out of a repeater or room server.
    case logout = 29
    /// `GET_CONTACT_BY_KEY`: reads one contact.
    case getContactByKey = 30
    /// `GET_CHANNEL`: reads a channel's name and secret.
    case getChannel = 31
    /// `SET_CHANNEL`: sets a channel's name and secret.
    case setChannel = 32
    /// `SIGN_START`: starts signing data with the node key.
    case signStart = 33
    /// `SIGN_DATA`: feeds data to be signed.
    case signData = 34
    /// `SIGN_FINISH`: finishes signing and returns the signature.
    case signFinish = 35
    /// `SEND_TRACE_PATH`: traces a path through repeaters.
    case sendTracePath = 36
    /// `SET_DEVICE_PIN`: sets the BLE pairing PIN.
    case setDevicePin = 37
    /// `SET_OTHER_PARAMS`: sets miscellaneous node options.
    case setOtherParams = 38
    /// `SEND_TELEMETRY_REQ`: asks a node for telemetry.
    case sendTelemetryRequest = 39
    /// `GET_CUSTOM_VARS`: reads custom variables.
    case getCustomVars = 40
    /// `SET_CUSTOM_VAR`: sets one custom variable (`name:value`).
    case setCustomVar = 41
    /// `GET_ADVERT_PATH`: reads the path of a contact's last advert.
    case getAdvertPath = 42
    /// `GET_TUNING_PARAMS`: reads radio timing parameters.
    case getTuningParams = 43
    /// `SEND_BINARY_REQ`: sends a binary request to a node.
    case sendBinaryRequest = 50
    /// `FACTORY_RESET`: erases the radio's settings.
    case factoryReset = 51
    /// `SEND_PATH_DISCOVERY_REQ`: discovers a path to a node.
    case sendPathDiscoveryRequest = 52
    /// `SET_FLOOD_SCOPE_KEY`: sets the key that scopes this session's floods (not kept).
    case setFloodScopeKey = 54
    /// `SEND_CONTROL_DATA`: sends control data (node discovery) zero-hop.
    case sendControlData = 55
    /// `GET_STATS`: reads core, radio or packet statistics.
    case getStats = 56
    /// `SEND_ANON_REQ`: sends an anonymous request (regions, owner, clock) to a node.
    case sendAnonymousRequest = 57
    /// `SET_AUTOADD_CONFIG`: sets which kinds of node are added automatically.
    case setAutoAddConfig = 58
    /// `GET_AUTOADD_CONFIG`: reads which kinds of node are added automatically.
    case getAutoAddConfig = 59
    /// `GET_ALLOWED_REPEAT_FREQ`: reads the frequency ranges the radio may repeat on.
    case getAllowedRepeatFrequencies = 60
    /// `SET_PATH_HASH_MODE`: sets the hash size of this node's path entries.
    case setPathHashMode = 61
    /// `SEND_CHANNEL_DATA`: sends a binary datagram on a channel.
    case sendChannelData = 62
    /// `SET_DEFAULT_FLOOD_SCOPE`: sets the flood scope kept across reboots.
    case setDefaultFloodScope = 63
    /// `GET_DEFAULT_FLOOD_SCOPE`: reads the flood scope kept across reboots.
    case getDefaultFloodScope = 64
    /// `SEND_RAW_PACKET`: sends a whole raw mesh packet.
    case sendRawPacket = 65
    /// `RUN_CLI_COMMAND` (protocol 14): runs a command of the radio's own CLI.
    case runCLICommand = 66
}

/// The code byte of each response the radio sends in answer to a command.
public enum MeshCoreResponseCode: UInt8, Sendable, CaseIterable {
    /// `OK`, optionally with a `UInt32` value.
    case ok = 0
    /// `ERR` with an error code.
    case error = 1
    /// `CONTACTS_START` with the number of contacts to follow.
    case contactsStart = 2
    /// `CONTACT`: one contact of a listing.
    case contact = 3
    /// `END_OF_CONTACTS` with the most recent modification time.
    case endOfContacts = 4
    /// `SELF_INFO`: the node's own identity and radio settings.
    case selfInfo = 5
    /// `SENT`: a direct message was queued.
    case sent = 6
    /// `CONTACT_MSG_RECV`: a direct message, legacy layout.
    case contactMessageReceived = 7
    /// `CHANNEL_MSG_RECV`: a channel message, legacy layout.
    case channelMessageReceived = 8
    /// `CURR_TIME`: the radio's clock.
    case currentTime = 9
    /// `NO_MORE_MESSAGES`: the message queue is empty.
    case noMoreMessages = 10
    /// `EXPORT_CONTACT`: an exported advert packet.
    case exportContact = 11
    /// `BATT_AND_STORAGE`: battery voltage and storage use.
    case batteryAndStorage = 12
    /// `DEVICE_INFO`: firmware and hardware details.
    case deviceInfo = 13
    /// `PRIVATE_KEY`: the exported private key.
    case privateKey = 14
    /// `DISABLED`: the feature is disabled on this radio.
    case disabled = 15
    /// `CONTACT_MSG_RECV_V3`: a direct message with SNR.
    case contactMessageReceivedV3 = 16
    /// `CHANNEL_MSG_RECV_V3`: a channel message with SNR.
    case channelMessageReceivedV3 = 17
    /// `CHANNEL_INFO`: a channel's name and secret.
    case channelInfo = 18
    /// `SIGN_START`: signing started, with the largest amount of data it takes.
    case signStart = 19
    /// `SIGNATURE`: the signature of the data fed since `SIGN_START`.
    case signature = 20
    /// `CUSTOM_VARS`: the custom variables, `name:value` pairs separated by commas.
    case customVars = 21
    /// `ADVERT_PATH`: the path a contact's last advert came by.
    case advertPath = 22
    /// `TUNING_PARAMS`: radio timing parameters.
    case tuningParams = 23
    /// `STATS`: core, radio or packet statistics.
    case stats = 24
    /// `AUTOADD_CONFIG`: which kinds of node are added automatically.
    case autoAddConfig = 25
    /// `ALLOWED_REPEAT_FREQ`: the frequency ranges the radio may repeat on.
    case allowedRepeatFrequencies = 26
    /// `CHANNEL_DATA_RECV`: a binary datagram received on a channel.
    case channelDataReceived = 27
    /// `DEFAULT_FLOOD_SCOPE`: the flood scope kept across reboots.
    case defaultFloodScope = 28
    /// `CLI_REPLY` (protocol 14): the output of a `RUN_CLI_COMMAND`.
    case cliReply = 29
}

/// The code byte of each unsolicited push from the radio (all are `0x80` or above).
public enum MeshCorePushCode: UInt8, Sendable, CaseIterable {
    /// `ADVERT`: a known contact advertised.
    case advert = 0x80
    /// `PATH_UPDATED`: a contact's path changed.
    case pathUpdated = 0x81
    /// `SEND_CONFIRMED`: a sent message was acknowledged.
    case sendConfirmed = 0x82
    /// `MSG_WAITING`: a message is queued; sync it with `SYNC_NEXT_MESSAGE`.
    case messageWaiting = 0x83
    /// `RAW_DATA`: raw data received.
    case rawData = 0x84
    /// `LOGIN_SUCCESS`: a login was accepted.
    case loginSuccess = 0x85
    /// `LOGIN_FAIL`: a login was refused.
    case loginFail = 0x86
    /// `STATUS_RESPONSE`: a repeater's status.
    case statusResponse = 0x87
    /// `LOG_RX_DATA`: a received packet, for logging.
    case logRxData = 0x88
    /// `TRACE_DATA`: the result of a path trace.
    case traceData = 0x89
    /// `NEW_ADVERT`: an unknown node advertised (manual add mode).
    case newAdvert = 0x8A
    /// `TELEMETRY_RESPONSE`: telemetry from a node.
    case telemetryResponse = 0x8B
    /// `BINARY_RESPONSE`: the answer to a binary request.
    case binaryResponse = 0x8C
    /// `PATH_DISCOVERY_RESPONSE`: the result of a path discovery.
    case pathDiscoveryResponse = 0x8D
    /// `CONTROL_DATA`: control data received.
    case controlData = 0x8E
    /// `CONTACT_DELETED`: the radio removed a contact.
    case contactDeleted = 0x8F
    /// `CONTACTS_FULL`: the contact table is full.
    case contactsFull = 0x90
}
